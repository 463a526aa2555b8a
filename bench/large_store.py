"""Large-store benchmark: the engine's CPU per execution with many stored recurring jobs.

    .venv/bin/python bench/large_store.py [--stored 5000,300000] [--due 5000]
        [--postgres postgresql://postgres@127.0.0.1:5432/test] [--plan-cache-size N]
        [--only sqlite|postgres]

For each database (a SQLite file; with `--postgres`, also fresh PostgreSQL databases created
from that server and dropped after) and each number of stored jobs, in a process of its own:

1. `--stored` recurring jobs are stored (70 % hourly, 20 % daily, 10 % weekly; UTC), `--due` of
   them falling due in the measured minute, Monday 09:00 (70/20/10 too: hourly ones at :00,
   daily ones at 09:00, weekly ones on Mondays at 09:00), the others at every other minute of
   the hour, day and week. They go in 1,000 rows per statement with the columns the API's
   `store.resources.jobs.insert_one` writes; then the store is opened again as a restart would
   (`store.core.db.migrate`).
2. Warm-up: the engine (`Scheduler`, default settings, the clock at 08:59:59) runs every job's
   previous execution once, so that the process is in the state of an engine that has been
   running for a week: each job ran in it before (the plan cache has met every job).
   On PostgreSQL, `VACUUM ANALYZE` follows, as autovacuum would have run in that week (the
   test server runs with autovacuum off).
3. Measured: the clock moves to 09:00:30 and the engine runs the `--due` executions now due.
   CPU = this process's CPU time (all threads, SQLite's included; PostgreSQL's server is
   another process) per execution; claim = the average claim transaction
   (`horarium_claim_seconds`); RSS = the process's resident memory after it.

The action is a no-op (the engine's own work is what is measured; `bench/dispatch.py` measures
HTTP actions). Not a test: prints a table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support import (
    LABELS,
    Clock,
    NoAction,
    add_collections,
    fresh_store,
    insert_jobs,
    job_row,
    rss_mb,
    run,
    vacuum,
)

# The measured minute starts at MEASURED (a Monday, 09:00 UTC); the warm-up runs at WARM_UP.
MEASURED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
WARM_UP = MEASURED - timedelta(seconds=1)
SET_AT = MEASURED - timedelta(days=9)  # when every job's schedule was set
START = MEASURED - timedelta(days=7, hours=1)  # every job's startTime: Monday 08:00
MINUTES_A_DAY = 24 * 60
MINUTES_A_WEEK = 7 * MINUTES_A_DAY
ACTION = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/never", "method": "POST"}}


@dataclass
class Outcome:
    database: str
    stored: int
    due: int
    load_s: float
    warm_executions: int
    warm_s: float
    warm_cpu_us: float
    executions: int
    seconds: float
    cpu_us: float
    claim_ms: float
    rss_mb: float
    ran_twice: int


# -- the jobs ------------------------------------------------------------------------------------


def schedule(i: int, due: int) -> tuple[dict[str, Any], datetime]:
    """Job i's definition and its last execution at or before WARM_UP (the one the warm-up
    runs); the first `due` jobs run next in the measured minute."""
    kind = i % 10
    if kind < 7:  # hourly, at minute m of every hour (from a startTime at that minute)
        minute = 0 if i < due else 1 + i % 59
        start = START + timedelta(minutes=minute)
        hourly = {"frequency": "Hour", "interval": 1}
        return definition(hourly, start), _previous(MEASURED, minute, 60)
    if kind < 9:  # daily, at one minute of the day
        of_day = 9 * 60 if i < due else (9 * 60 + 1 + i % (MINUTES_A_DAY - 1)) % MINUTES_A_DAY
        recurrence = {
            "frequency": "Day",
            "interval": 1,
            "schedule": {"hours": [of_day // 60], "minutes": [of_day % 60]},
        }
        day_start = MEASURED.replace(hour=0)
        return definition(recurrence), _previous(day_start, of_day, MINUTES_A_DAY)
    # weekly, at one minute of the week (minute 0 of the week: Monday 00:00)
    of_week = 9 * 60 if i < due else (9 * 60 + 1 + i % (MINUTES_A_WEEK - 1)) % MINUTES_A_WEEK
    day, of_day = divmod(of_week, MINUTES_A_DAY)
    weekday = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][day]
    recurrence = {
        "frequency": "Week",
        "interval": 1,
        "schedule": {"weekDays": [weekday], "hours": [of_day // 60], "minutes": [of_day % 60]},
    }
    week_start = MEASURED.replace(hour=0)  # MEASURED is a Monday
    return definition(recurrence), _previous(week_start, of_week, MINUTES_A_WEEK)


def _previous(period_start: datetime, minute: int, period: int) -> datetime:
    """The last instant `minute` minutes into a period of `period` minutes at or before
    WARM_UP, periods counted from `period_start`."""
    at = period_start + timedelta(minutes=minute)
    while at > WARM_UP:
        at -= timedelta(minutes=period)
    while at + timedelta(minutes=period) <= WARM_UP:
        at += timedelta(minutes=period)
    return at


def definition(recurrence: Mapping[str, Any], start: datetime = START) -> dict[str, Any]:
    return {"startTime": start.isoformat(), "action": ACTION, "recurrence": dict(recurrence)}


def check_schedules(stored: int, due: int) -> None:
    """The arithmetic above agrees with the recurrence engine (a sample of the jobs)."""
    from horarium.recurrence import plan

    for i in list(range(0, stored, max(1, stored // 500))) + list(range(min(due, 30))):
        job, previous = schedule(i, due)
        compiled = plan(job, created=SET_AT)
        assert compiled.at_or_after(previous) == previous, (i, job, previous)
        following = compiled.after(previous)
        assert following is not None and following > WARM_UP, (i, job)
        assert (following < MEASURED + timedelta(minutes=1)) == (i < due), (i, following)


async def store_jobs(db: Any, stored: int, due: int) -> None:
    """`stored` jobs (`schedule`) in collections of 5,000, job i in collection i % their count;
    a transaction for the collections and one per 1,000 jobs."""
    per_collection = 5000
    count = (stored + per_collection - 1) // per_collection
    async with db.begin() as conn:
        collections = await add_collections(conn, [f"c{c}" for c in range(count)], SET_AT)
    for start in range(0, stored, 1000):
        rows = []
        for i in range(start, min(stored, start + 1000)):
            job, previous = schedule(i, due)
            collection = collections[i % len(collections)]
            rows.append(job_row(collection, i, job, previous, SET_AT, next_repeat=1))
        async with db.begin() as conn:
            await insert_jobs(conn, rows)


# -- one run -------------------------------------------------------------------------------------


def claim_totals() -> tuple[float, float]:
    from prometheus_client import REGISTRY

    total = REGISTRY.get_sample_value("horarium_claim_seconds_sum") or 0.0
    count = REGISTRY.get_sample_value("horarium_claim_seconds_count") or 0.0
    return total, count


async def run_one(url: str, label: str, stored: int, due: int, tuning: dict[str, Any]) -> Outcome:
    import gc

    from sqlalchemy import func, select

    from horarium.config import Settings
    from horarium.engine.gc_tuning import tune_gc
    from horarium.engine.scheduler import Scheduler
    from horarium.store.core.db import create_engine, migrate
    from horarium.store.core.schema import jobs

    check_schedules(stored, due)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), database=url, **tuning)
        db = create_engine(settings.database_url)
        await migrate(db)
        t0 = time.perf_counter()
        await store_jobs(db, stored, due)
        load = time.perf_counter() - t0
        await db.dispose()
        db = create_engine(settings.database_url)  # the restart after the load
        await migrate(db)
        gc.collect()
        tune_gc()  # as the engine's service does once the process is up
        clock = Clock(WARM_UP)
        scheduler = Scheduler(db, settings, NoAction(), clock=clock, owner=f"bench:1:{label}")

        w0, c0 = time.perf_counter(), time.process_time()
        warm = await scheduler.dispatcher.drain()
        warm_s, warm_cpu = time.perf_counter() - w0, time.process_time() - c0

        if db.dialect.name == "postgresql":
            # What autovacuum does in the week the warm-up stands for: the warm-up rewrote every
            # job row once (dead rows, dead index entries, statistics of the week before).
            await vacuum(db)
        clock.at = MEASURED + timedelta(seconds=30)
        claims0 = claim_totals()
        w0, c0 = time.perf_counter(), time.process_time()
        n = await scheduler.dispatcher.drain()
        seconds, cpu = time.perf_counter() - w0, time.process_time() - c0
        claims1 = claim_totals()
        rss = rss_mb()
        await scheduler.stop()
        async with db.connect() as conn:
            twice = (
                await conn.execute(select(func.count()).where(jobs.c.execution_count == 2))
            ).scalar_one()
        await db.dispose()
    claim_count = claims1[1] - claims0[1]
    return Outcome(
        database=label,
        stored=stored,
        due=due,
        load_s=load,
        warm_executions=warm,
        warm_s=warm_s,
        warm_cpu_us=warm_cpu / warm * 1e6 if warm else float("nan"),
        executions=n,
        seconds=seconds,
        cpu_us=cpu / n * 1e6 if n else float("nan"),
        claim_ms=(claims1[0] - claims0[0]) / claim_count * 1e3 if claim_count else float("nan"),
        rss_mb=rss,
        ran_twice=int(twice),
    )


def one(args: argparse.Namespace) -> None:
    """Run one (database, stored) case in this process; print its outcome as JSON."""
    tuning = {} if args.plan_cache_size is None else {"plan_cache_size": args.plan_cache_size}

    async def in_store() -> Outcome:
        async with fresh_store(args.one, args.postgres) as url:
            return await run_one(url, LABELS[args.one], args.stored_one, args.due, tuning)

    print(json.dumps(asdict(run(in_store()))))


# -- the table -----------------------------------------------------------------------------------


def row(o: Outcome, base: Outcome | None) -> str:
    versus = f"{(o.cpu_us / base.cpu_us - 1) * 100:+.0f} %" if base and base is not o else "–"
    return (
        f"| {o.database} | {o.stored:,} | {o.executions:,} | {o.cpu_us:.0f} | {versus}"
        f" | {o.seconds:.2f} | {o.claim_ms:.1f} | {o.rss_mb:.0f} | {o.warm_executions:,}"
        f" in {o.warm_s:.0f} s ({o.warm_cpu_us:.0f} µs) | {o.load_s:.0f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stored", default="5000,300000", help="stored jobs, comma-separated")
    parser.add_argument("--due", type=int, default=5000, help="jobs due in the measured minute")
    parser.add_argument("--postgres", help="a PostgreSQL database URL to create databases from")
    parser.add_argument("--plan-cache-size", type=int, help="the engine setting (default: its)")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="run on this database alone")
    parser.add_argument("--one", choices=("sqlite", "postgres"), help=argparse.SUPPRESS)
    parser.add_argument("--stored-one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args)
        return
    sizes = [int(s) for s in args.stored.split(",")]
    databases = ["sqlite"] + (["postgres"] if args.postgres else [])
    if args.only:
        databases = [args.only]
    if "postgres" in databases and not args.postgres:
        parser.error("--only postgres needs --postgres")
    print(
        "| database | stored jobs | executions | CPU µs / execution | vs fewest stored"
        " | seconds | claim ms | RSS MB | warm-up (CPU µs / execution) | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for database in databases:
        base: Outcome | None = None
        for stored in sizes:
            command = [sys.executable, __file__, "--one", database, "--stored-one", str(stored)]
            command += ["--due", str(args.due)]
            if args.postgres:
                command += ["--postgres", args.postgres]
            if args.plan_cache_size is not None:
                command += ["--plan-cache-size", str(args.plan_cache_size)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                print(f"{database} {stored}: failed\n{done.stderr}", file=sys.stderr)
                continue
            outcome = Outcome(**json.loads(done.stdout.strip().splitlines()[-1]))
            if outcome.ran_twice != outcome.due or outcome.executions != outcome.due:
                print(
                    f"{database} {stored}: {outcome.executions} executions,"
                    f" {outcome.ran_twice} jobs ran twice (expected {outcome.due})",
                    file=sys.stderr,
                )
            base = base or outcome
            print(row(outcome, base), flush=True)


if __name__ == "__main__":
    main()
