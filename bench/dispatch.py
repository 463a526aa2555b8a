"""Dispatch benchmark: N jobs due at once, run against an HTTP sink in another process.

    .venv/bin/python bench/dispatch.py [--jobs 5000] [--paced-rate 1000] [--sink-delay 0]

Compares, on the same machine, sink and HTTP client:
  ceiling     the HTTP action client sending the same N requests, no scheduler
  horarium    the engine on SQLite: N one-time jobs due at the same instant; history and status
              written (checked after the run)
  apscheduler APScheduler 3 AsyncIOScheduler, SQLAlchemy job store on SQLite, N DateTrigger jobs
              due at the same instant, each sending the same request with the same client
and the same two schedulers on a paced workload (N jobs due `--paced-rate` per second).
With `--memory-store`, each burst round also runs the engine on the unit tests' in-memory store
(no database): what the burst could reach were the store's work free.

The sink answers at once, or after `--sink-delay` seconds (a slow endpoint: the slots, not the
CPU, then bound the burst). Start lag = actual start of the request - expected time.
Executions/s = N / (end of the last execution - due instant). Peak running = the most actions
under way at once (a burst of one collection may take all of horarium's `--max-in-flight`). All
three run in this process, on the event loop `--loop` names (as `horarium serve --loop`; default
auto: uvloop when installed), with `--max-in-flight` as their concurrency. Not a test: prints a
table.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support import (
    add_collections,
    http_action,
    insert_jobs,
    job_row,
    percentile,
    record_figures,
    run,
    sink,
    sink_cpu,
)

REPOSITORY = str(Path(__file__).resolve().parent.parent)


@dataclass
class Result:
    name: str
    executions: int
    seconds: float
    lags: list[float]
    cpu: float = float("nan")  # this process's CPU seconds (all threads) during the run
    peak: int = 0  # the most actions running at once
    sink_cpu: float = float("nan")  # the sink's CPU seconds during the run

    @property
    def rate(self) -> float:
        return self.executions / self.seconds if self.seconds > 0 else float("nan")

    def lag(self, q: float) -> float:
        return percentile(self.lags, q)


def settings(data_dir: Path, **changes: Any) -> Any:
    from horarium.config import Settings

    return Settings(data_dir=data_dir, **changes)


class Counting:
    """An action runner counting the actions under way: `peak`, the most at once."""

    def __init__(self, actions: Any) -> None:
        self.actions = actions
        self.running = 0
        self.peak = 0

    async def run(self, action: Any, context: Any) -> Any:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            return await self.actions.run(action, context)
        finally:
            self.running -= 1


# -- ceiling: the action client alone ------------------------------------------------------------


async def run_ceiling(url: str, n: int, concurrency: int) -> Result:
    from horarium.actions.base import ExecutionContext
    from horarium.actions.runner import Actions

    action = http_action(f"{url}/ceiling")
    gate = asyncio.Semaphore(concurrency)
    failures = 0

    async with Actions(settings(Path("."), max_in_flight=concurrency)) as client:
        actions = Counting(client)

        async def one(i: int) -> None:
            nonlocal failures
            async with gate:
                ctx = ExecutionContext(
                    job_id=f"/subscriptions/s/resourceGroups/r/providers/Microsoft.Scheduler/jobCollections/c/jobs/j{i}",
                    collection_id="/subscriptions/s/resourceGroups/r/providers/Microsoft.Scheduler/jobCollections/c",
                    execution_tag=uuid.uuid4().hex,
                    client_request_id=str(uuid.uuid4()),
                    expected_time=datetime.now(UTC),
                    region="bench",
                )
                result = await actions.run(action, ctx)
                failures += 0 if result.succeeded else 1

        await one(-1)  # warm the connection pool
        actions.peak = 0
        t0 = time.perf_counter()
        c0 = time.process_time()
        await asyncio.gather(*(one(i) for i in range(n)))
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
    if failures:
        print(f"ceiling: {failures} requests failed", file=sys.stderr)
    return Result("ceiling: the HTTP action client alone", n, elapsed, [], cpu, actions.peak)


# -- horarium ------------------------------------------------------------------------------------


async def _insert_jobs(db: Any, url: str, due: Sequence[datetime], now: datetime) -> None:
    """Job i due at due[i], a POST to `url`/jobI, all in one collection and one transaction."""
    async with db.begin() as conn:
        (collection,) = await add_collections(conn, ["c"], now)
        rows = [
            job_row(
                collection,
                i,
                {"startTime": at.isoformat(), "action": http_action(f"{url}/job{i}")},
                at,
                now,
            )
            for i, at in enumerate(due)
        ]
        await insert_jobs(conn, rows)


async def run_horarium(
    url: str, offsets: Sequence[float], slots: int | None = None, **tuning: Any
) -> Result:
    """The jobs fall due at `offsets` seconds after an instant chosen once the database is
    ready, late enough that they are stored and the engine is up and idle before the first;
    `slots`: its `max_in_flight` (default: the settings' default)."""
    from sqlalchemy import func, select

    from horarium.actions.runner import Actions
    from horarium.engine.scheduler import Scheduler
    from horarium.store.core.db import create_engine, migrate
    from horarium.store.core.schema import job_history, jobs

    with tempfile.TemporaryDirectory() as tmp:
        given = tuning if slots is None else {"max_in_flight": slots, **tuning}
        cfg = settings(Path(tmp), **given)
        db = create_engine(cfg.database_url)
        await migrate(db)
        now = datetime.now(UTC)
        base = now + timedelta(seconds=1 + 0.0004 * len(offsets))  # ~0.1 ms to store a job
        due = [base + timedelta(seconds=off) for off in offsets]
        await _insert_jobs(db, url, due, now)
        async with Actions(cfg) as client:
            actions = Counting(client)
            scheduler = Scheduler(db, cfg, actions)
            c0 = time.process_time()
            scheduler.start()
            if datetime.now(UTC) >= base:
                print("horarium: storing the jobs overran the due time", file=sys.stderr)
            n = len(due)
            while True:
                await asyncio.sleep(0.2)
                async with db.connect() as conn:
                    done = (
                        await conn.execute(select(func.count()).select_from(job_history))
                    ).scalar_one()
                if done >= n:
                    break
            await scheduler.stop()
            cpu = time.process_time() - c0
        async with db.connect() as conn:
            history = (
                await conn.execute(
                    select(
                        job_history.c.start_time,
                        job_history.c.end_time,
                        job_history.c.expected_execution_time,
                        job_history.c.status,
                    )
                )
            ).all()
            completed = (
                await conn.execute(
                    select(func.count()).where(
                        jobs.c.state == "Completed", jobs.c.execution_count == 1
                    )
                )
            ).scalar_one()
        await db.dispose()
    failed = sum(1 for h in history if h.status != "Completed")
    if failed or completed != len(due):
        print(f"horarium: {failed} failed, {completed}/{len(due)} jobs Completed", file=sys.stderr)
    first_due = min(due)
    last_end = max(h.end_time for h in history)
    lags = [(h.start_time - h.expected_execution_time).total_seconds() for h in history]
    label = "horarium (SQLite, history+status)"
    if tuning:
        label += " " + ",".join(f"{k}={v}" for k, v in tuning.items())
    seconds = (last_end - first_due).total_seconds()
    return Result(label, len(history), seconds, lags, cpu, actions.peak)


def memory_burst_store(url: str, n: int, due: datetime, now: datetime) -> Any:
    """The unit tests' in-memory store (tests/engine/memory_store.py) holding N one-time jobs
    due at `due`, a POST to `url`/jobI each, its due jobs found from a cursor over the jobs in
    order, not by scanning every job at each claim (the jobs are one-time, all due, and claimed
    in that order)."""
    sys.path.insert(0, REPOSITORY)  # the `tests` package
    from horarium.model.enums import JobState
    from tests.engine.memory_store import MemoryRunStore

    class BurstStore(MemoryRunStore):
        order: list[Any]
        first = 0  # the jobs before it are all leased or done
        limit = 0

        async def claim(self, now: datetime, limit: int, *rest: Any, **named: Any) -> Any:
            self.limit = limit
            return await super().claim(now, limit, *rest, **named)

        def _due_jobs(self, horizon: datetime, now: datetime) -> list[Any]:
            while self.first < len(self.order) and self.taken(self.order[self.first]):
                self.first += 1
            ahead = self.order[self.first : self.first + 2 * self.limit]
            return [job for job in ahead if self.due(job, horizon)][: self.limit]

        @staticmethod
        def taken(job: Any) -> bool:
            return job.lease_owner is not None or job.next_at is None

        @staticmethod
        def due(job: Any, horizon: datetime) -> bool:
            return (
                job.next_at is not None
                and job.next_at <= horizon
                and job.info.state == JobState.ENABLED
                and job.lease_owner is None
            )

    store = BurstStore()
    start = due.isoformat().replace("+00:00", "Z")
    for i in range(n):
        store.add(f"job{i}", {"action": http_action(f"{url}/job{i}"), "startTime": start}, now)
    store.order = list(store.jobs.values())
    return store


async def run_memory_engine(url: str, n: int, concurrency: int) -> Result:
    """The burst's bound without a database: the engine's dispatcher, recorder and decider as
    `Scheduler` assembles them, on the in-memory store the unit tests use (dictionaries on the
    event loop, no writer thread; `memory_burst_store`), N one-time jobs due at one instant, the
    same action client. The end is seen within 5 ms."""
    from horarium.actions.runner import Actions
    from horarium.engine.clock import SystemClock
    from horarium.engine.deciding import Decider
    from horarium.engine.dispatcher import Dispatcher
    from horarium.engine.plans import Plans
    from horarium.engine.recorder import Recorder

    cfg = settings(Path("."), max_in_flight=concurrency)
    now = datetime.now(UTC)
    due = now + timedelta(seconds=1 + 0.0002 * n)
    store = memory_burst_store(url, n, due, now)
    async with Actions(cfg) as client:
        actions = Counting(client)
        clock = SystemClock()
        recorder = Recorder(store, clock)
        decider = Decider(Plans(cfg.plan_cache_size), timedelta(seconds=cfg.grace_period))
        dispatcher = Dispatcher(store, actions, cfg, clock, recorder, decider)
        c0 = time.process_time()
        dispatcher.start()
        while True:
            await asyncio.sleep(0.005)
            if len(store.history) >= n:
                break
        end = datetime.now(UTC)
        await dispatcher.stop()
        cpu = time.process_time() - c0
    lags = [(entry.started - due).total_seconds() for entry in store.history]
    seconds = (end - due).total_seconds()
    return Result("engine on an in-memory store (no database)", n, seconds, lags, cpu, actions.peak)


# -- APScheduler 3 -------------------------------------------------------------------------------

_ap_state: dict[str, Any] = {}


async def _ap_job(i: int, expected: float) -> None:
    """What each APScheduler job runs: the same request with the same client."""
    from horarium.actions.base import ExecutionContext

    start = time.time()
    ctx = ExecutionContext(
        job_id=f"/jobs/j{i}",
        collection_id="/c",
        execution_tag=uuid.uuid4().hex,
        client_request_id=str(uuid.uuid4()),
        expected_time=datetime.fromtimestamp(expected, UTC),
        region="bench",
    )
    result = await _ap_state["actions"].run(http_action(f"{_ap_state['url']}/ap{i}"), ctx)
    _ap_state["lags"].append(start - expected)
    _ap_state["ends"].append(time.time())
    _ap_state["failures"] += 0 if result.succeeded else 1
    if len(_ap_state["ends"]) >= _ap_state["n"]:
        _ap_state["done"].set()


async def run_apscheduler(url: str, offsets: Sequence[float], concurrency: int) -> Result:
    from apscheduler.executors.asyncio import AsyncIOExecutor
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from horarium.actions.runner import Actions

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLAlchemyJobStore(url=f"sqlite:///{tmp}/ap.sqlite3")
        scheduler = AsyncIOScheduler(
            jobstores={"default": store},
            executors={"default": AsyncIOExecutor()},
            job_defaults={"misfire_grace_time": None, "coalesce": False, "max_instances": 1},
            timezone="UTC",
        )
        async with Actions(settings(Path(tmp), max_in_flight=concurrency)) as client:
            actions = Counting(client)
            _ap_state.update(
                actions=actions,
                url=url,
                lags=[],
                ends=[],
                failures=0,
                n=len(offsets),
                done=asyncio.Event(),
            )
            # Store the jobs first (the scheduler paused; ~2 ms per add_job on SQLite), all due
            # after the last one is stored, then let it run.
            scheduler.start(paused=True)
            base = datetime.now(UTC) + timedelta(seconds=3 + 0.004 * len(offsets))
            due = [base + timedelta(seconds=off) for off in offsets]
            for i, at in enumerate(due):
                scheduler.add_job(
                    _ap_job,
                    "date",
                    run_date=at,
                    args=[i, at.timestamp()],
                    id=f"j{i}",
                )
            if datetime.now(UTC) >= base:
                print("apscheduler: storing the jobs overran the due time", file=sys.stderr)
            c0 = time.process_time()
            scheduler.resume()
            await _ap_state["done"].wait()
            cpu = time.process_time() - c0
            scheduler.shutdown(wait=False)
    if _ap_state["failures"]:
        print(f"apscheduler: {_ap_state['failures']} requests failed", file=sys.stderr)
    seconds = max(_ap_state["ends"]) - min(d.timestamp() for d in due)
    label = "apscheduler 3 (SQLAlchemy/SQLite store)"
    return Result(label, len(due), seconds, _ap_state["lags"], cpu, actions.peak)


# -- main ----------------------------------------------------------------------------------------


def table(title: str, results: list[Result], ceiling: float | None) -> str:
    lines = [
        f"{title}",
        "| system | executions | seconds | executions/s | lag p50 s | lag p99 s | lag max s "
        "| of ceiling | CPU µs / execution | sink CPU µs / request | peak running |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        share = f"{r.rate / ceiling:.0%}" if ceiling and r.lags else "–"
        if not r.lags:
            lags = "– | – | –"
        else:
            lags = f"{r.lag(0.5):.3f} | {r.lag(0.99):.3f} | {max(r.lags):.3f}"
        sink = "–" if math.isnan(r.sink_cpu) else f"{r.sink_cpu / r.executions * 1e6:,.0f}"
        lines.append(
            f"| {r.name} | {r.executions} | {r.seconds:.2f} | {r.rate:,.0f} | {lags} | {share} "
            f"| {r.cpu / r.executions * 1e6:,.0f} | {sink} | {r.peak} |"
        )
    return "\n".join(lines)


def prepare_process() -> None:
    """Import everything, then tune the garbage collector as `horarium serve` and `horarium
    worker` do when their engine starts (`tune_gc`); the three systems run in this process
    under the same settings."""
    import apscheduler.schedulers.asyncio  # noqa: F401
    import sqlalchemy.ext.asyncio  # noqa: F401

    import horarium.actions.runner
    import horarium.engine.scheduler
    import horarium.store.core.db  # noqa: F401
    from horarium.engine.gc_tuning import tune_gc

    tune_gc()


def summary(rounds: list[list[Result]]) -> str:
    """Per system, the median of the rounds (and their range): executions/s, p99 lag, CPU."""
    lines = [
        f"Burst, {len(rounds)} rounds: median (min-max)",
        "| system | executions/s | lag p99 s | CPU µs / execution | × apscheduler | peak running |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    ap = [r for round_ in rounds for r in round_ if r.name.startswith("apscheduler")]
    for i, first in enumerate(rounds[0]):
        runs = [round_[i] for round_ in rounds]
        rates = sorted(r.rate for r in runs)
        cpus = sorted(r.cpu / r.executions * 1e6 for r in runs)
        p99 = sorted(r.lag(0.99) for r in runs) if first.lags else []
        peaks = sorted(r.peak for r in runs)
        ratios = sorted(r.rate / a.rate for r, a in zip(runs, ap, strict=False)) if ap else []
        lag = f"{statistics.median(p99):.3f}" if p99 else "–"
        times = "–"
        if ratios:
            times = f"{statistics.median(ratios):.1f} ({ratios[0]:.1f}-{ratios[-1]:.1f})"
        lines.append(
            f"| {first.name} | {statistics.median(rates):,.0f} ({rates[0]:,.0f}-{rates[-1]:,.0f}) "
            f"| {lag} | {statistics.median(cpus):,.0f} | {times} | {peaks[0]}-{peaks[-1]} |"
        )
    return "\n".join(lines)


def current_figures(rounds: list[list[Result]], paced: list[Result]) -> list[tuple[str, str]]:
    """The figures of docs/benchmarks.md's current table: medians over the burst rounds (each
    round: the ceiling, horarium, and apscheduler unless skipped) and the paced run's lag."""

    def median(values: list[float]) -> float:
        return statistics.median(values)

    ceiling, horarium = [r[0] for r in rounds], [r[1] for r in rounds]
    figures = [
        ("SQLite burst: executions/s", f"{median([h.rate for h in horarium]):,.0f}"),
        (
            "SQLite burst: share of the ceiling (the action client alone)",
            f"{median([h.rate / c.rate for h, c in zip(horarium, ceiling, strict=True)]):.0%}",
        ),
        (
            "SQLite burst: CPU µs / execution, horarium / the client alone",
            f"{median([h.cpu / h.executions * 1e6 for h in horarium]):,.0f} / "
            f"{median([c.cpu / c.executions * 1e6 for c in ceiling]):,.0f}",
        ),
    ]
    if all(len(r) > 2 for r in rounds):
        ratios = [r[1].rate / r[2].rate for r in rounds]
        figures.append(("SQLite burst: × APScheduler 3", f"{median(ratios):.1f}"))
    if paced:
        figures.append(("paced: start lag p99 s", f"{paced[0].lag(0.99):.3f}"))
    return [
        (f"{name} (median of {len(rounds)})" if "burst" in name else name, value)
        for name, value in figures
    ]


async def with_sink_cpu(url: str, running: Awaitable[Result]) -> Result:
    """`running`'s result, with the CPU the sink spent meanwhile (the machine's other core is
    shared between the sink and whatever the system runs beside its event loop's thread)."""
    before = sink_cpu(url)
    result = await running
    result.sink_cpu = sink_cpu(url) - before
    return result


async def main(args: argparse.Namespace) -> None:
    from horarium.loops import running_loop_name

    prepare_process()
    print(f"Event loop: {running_loop_name()} (all three systems)\n")
    with sink(delay=args.sink_delay, record=False) as url:
        n = args.jobs
        concurrency = args.max_in_flight
        rounds: list[list[Result]] = []
        for round_ in range(1, args.rounds + 1):
            ceiling = await with_sink_cpu(url, run_ceiling(url, n, concurrency))
            burst: list[Result] = [ceiling]
            burst.append(await with_sink_cpu(url, run_horarium(url, [0.0] * n, concurrency)))
            if not args.skip_apscheduler:
                burst.append(await with_sink_cpu(url, run_apscheduler(url, [0.0] * n, concurrency)))
            if args.memory_store:  # last: current_figures reads the rows before it by position
                burst.append(await with_sink_cpu(url, run_memory_engine(url, n, concurrency)))
            rounds.append(burst)
            title = f"Burst, round {round_}: {n} jobs due at the same instant"
            print(table(title, burst, ceiling.rate), end="\n\n", flush=True)
        if len(rounds) > 1:
            print(summary(rounds), end="\n\n")

        paced: list[Result] = []
        m = args.paced_jobs
        if m:
            step = 1.0 / args.paced_rate
            paced.append(await run_horarium(url, [i * step for i in range(m)], concurrency))
            if not args.skip_apscheduler:
                paced.append(await run_apscheduler(url, [i * step for i in range(m)], concurrency))
            print(table(f"Paced: {m} jobs due at {args.paced_rate:g} per second", paced, None))
        record_figures("dispatch", current_figures(rounds, paced))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--paced-jobs", type=int, default=5000)
    parser.add_argument("--paced-rate", type=float, default=1000.0)
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=500,
        help="horarium's slots, and the concurrency of the ceiling and apscheduler",
    )
    parser.add_argument(
        "--sink-delay", type=float, default=0.0, help="seconds the sink takes to answer"
    )
    parser.add_argument("--skip-apscheduler", action="store_true")
    parser.add_argument(
        "--memory-store",
        action="store_true",
        help="also the engine on the unit tests' in-memory store: the burst without a database",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="burst rounds (each: ceiling, horarium, apscheduler)"
    )
    parser.add_argument(
        "--loop",
        default="auto",
        choices=("auto", "asyncio", "uvloop"),
        help="event loop of all three systems, as `horarium serve --loop` (default: auto)",
    )
    os.environ.setdefault("PYTHONHASHSEED", "0")
    arguments = parser.parse_args()
    run(main(arguments), arguments.loop)
