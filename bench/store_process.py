"""An experiment, not the product: the SQLite burst with the engine's store work in another
process, to measure what taking it off the engine process's GIL would give.

    .venv/bin/python bench/store_process.py [--jobs 5000] [--rounds 9]

Each round runs, against the same sink (another process) and with the same action client:
  ceiling     the action client alone (`dispatch.run_ceiling`)
  thread      horarium as it is: `Scheduler` on a SQLite file, the store's transactions on its
              writer thread (`dispatch.run_horarium`)
  process     the same `Scheduler`, its dispatcher and recorder given `PipeStore`: claims,
              records, renewals, deadline starts and the next-due read run in a child process
              (the same functions `Runs` runs: `Claimer.claim`, `recording.record`, …, on the
              same file), asked over one pipe the event loop reads. The child keeps the
              executions it handed out, so a record sends only each attempt's outcome.
  memory      the engine on the unit tests' in-memory store (`dispatch.run_memory_engine`): the
              bound, no database at all
and prints each round, then the medians: executions/s, share of the ceiling, CPU µs per
execution of the benchmark's process (and of the child, for `process`).

What the prototype leaves out, so that it is not mistaken for a design: claims are not bounded
by the collections' shares (`Shares`: one collection here, bounded by the claim's limit);
heartbeats and taking over a dead node's leases stay in the engine process; nothing handles the
child's death, a pipe message larger than the pipe's buffer while the child is busy, or the
engine lock. docs/benchmarks.md, "The store in another process: a prototype", has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dispatch
from support import TICKS, cpu_ticks, run, sink

# -- the child: the store's work -----------------------------------------------------------------


class _Child:
    """The child's state: a blocking SQLite engine, the statements, a decider, and the
    executions it has handed out (by key) until they are recorded."""

    def __init__(self, url: str, owner: str, plan_cache: int, grace: float) -> None:
        from horarium.engine.deciding import Decider
        from horarium.engine.plans import Plans
        from horarium.store.core.db import create_engine, sync_sqlite_engine
        from horarium.store.runs.sqlite_fast import FastSQLiteDialect
        from horarium.store.runs.statements import Statements

        self.sync = sync_sqlite_engine(create_engine(url))
        self.sql = Statements(FastSQLiteDialect())
        self.owner = owner
        self.decider = Decider(Plans(plan_cache), timedelta(seconds=grace))
        self.held: dict[str, Any] = {}

    def write(self, work: Any) -> Any:
        from horarium.store.runs.transact import _write

        return _write(self.sync, work)

    def answer(self, name: str, args: tuple[Any, ...]) -> Any:
        from horarium.store.runs import deadlines, leases, recording
        from horarium.store.runs.claims import Claimer
        from horarium.store.runs.transact import _read
        from horarium.store.runs.vocabulary import Attempt

        if name == "claim":
            now, limit, until, horizon = args
            claimer = Claimer(self.sql, self.owner, None)
            decide = self.decider.at(now)
            claimed = self.write(
                lambda conn: claimer.claim(conn, now, limit, lambda: until, decide, horizon, None)
            )
            self.held.update((execution.key, execution) for execution in claimed)
            return claimed
        if name == "record":
            rows, now = args
            attempts = [Attempt(self.held[key], *outcome) for key, *outcome in rows]
            accepted = self.write(
                lambda conn: recording.record(conn, self.sql, self.owner, attempts, now)
            )
            for key in accepted:
                self.held.pop(key, None)
            return accepted
        if name == "renew":
            keys, until = args
            held = [self.held[key] for key in keys if key in self.held]
            return self.write(
                lambda conn: leases.renew(conn, self.sql, self.owner, held, lambda: until)
            )
        if name == "started":
            keys, now = args
            started = [self.held[key] for key in keys if key in self.held]
            return self.write(lambda conn: deadlines.started(conn, started, now))
        if name == "next_due":
            return _read(self.sync, lambda conn: leases.next_due(conn, self.sql, args[0]))
        if name == "ping":
            return None
        raise ValueError(name)


def serve(conn: Any, url: str, owner: str, plan_cache: int, grace: float) -> None:
    """The child's loop: (id, name, args) in, (id, ok, result or error) out; None ends it."""
    child = _Child(url, owner, plan_cache, grace)
    while (message := conn.recv()) is not None:
        ident, name, args = message
        try:
            conn.send((ident, True, child.answer(name, args)))
        except Exception as exc:
            conn.send((ident, False, repr(exc)))


# -- the engine's side ---------------------------------------------------------------------------


class PipeStore:
    """A `RunStore` whose transactions run in the child; `parent` (the engine's `Runs`) keeps
    what is left here (heartbeats, taking over leases)."""

    def __init__(self, parent: Any, url: str, settings: Any) -> None:
        self.parent = parent
        context = multiprocessing.get_context("spawn")
        self.conn, theirs = context.Pipe()
        args = (theirs, url, parent.owner, settings.plan_cache_size, settings.grace_period)
        self.process = context.Process(target=serve, args=args)
        self.process.start()
        self.ids = itertools.count()
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.reading = False

    @property
    def owner(self) -> str:
        return str(self.parent.owner)

    def _readable(self) -> None:
        while self.conn.poll():
            ident, ok, result = self.conn.recv()
            future = self.waiting.pop(ident)
            if ok:
                future.set_result(result)
            else:
                future.set_exception(RuntimeError(result))

    async def _ask(self, name: str, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        if not self.reading:
            loop.add_reader(self.conn.fileno(), self._readable)
            os.set_blocking(self.conn.fileno(), True)  # the loop made it non-blocking: read whole
            self.reading = True
        ident = next(self.ids)
        self.waiting[ident] = future = loop.create_future()
        self.conn.send((ident, name, args))
        return await future

    async def claim(
        self,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        decide: Any,
        horizon: datetime | None = None,
        shares: Any = None,
    ) -> Any:
        # As for renewals, the lease's end crosses the pipe as a value read here.
        return await self._ask("claim", now, limit, until(), horizon or now)

    async def record(self, attempts: Any, now: datetime) -> Any:
        if not attempts:
            return set()
        rows = [
            (a.execution.key, a.started, a.ended, a.succeeded, a.message, a.step, a.faults)
            for a in attempts
        ]
        return await self._ask("record", rows, now)

    async def renew(self, held: Any, until: Callable[[], datetime]) -> None:
        # The time crosses the pipe as a value: read here, not once the child holds the rows.
        await self._ask("renew", [execution.key for execution in held], until())

    async def release(self, held: Any, now: datetime) -> None:
        await self.renew(held, lambda: now)

    async def mark_started(self, started: Any, now: datetime) -> None:
        await self._ask("started", [execution.key for execution in started], now)

    async def next_due(self, full: Any = ()) -> Any:
        return await self._ask("next_due", list(full))

    async def expire_gone_leases(self, now: datetime, gone: Any) -> int:
        return int(await self.parent.expire_gone_leases(now, gone))

    def nodes(self, node: Any) -> Any:
        return self.parent.nodes(node)

    def child_cpu(self) -> float:
        """The child's CPU seconds so far."""
        assert self.process.pid is not None
        return cpu_ticks(self.process.pid) / TICKS

    def stop(self) -> None:
        if self.reading:
            asyncio.get_running_loop().remove_reader(self.conn.fileno())
        self.conn.send(None)
        self.process.join(10)


# -- the run -------------------------------------------------------------------------------------


async def run_in_process(url: str, n: int, slots: int) -> tuple[float, float, float]:
    """Executions/s, and CPU µs per execution of this process and of the child."""
    from sqlalchemy import func, select

    from horarium.actions.runner import Actions
    from horarium.engine.scheduler import Scheduler
    from horarium.store.core.db import create_engine, migrate
    from horarium.store.core.schema import job_history, jobs

    with tempfile.TemporaryDirectory() as tmp:
        cfg = dispatch.settings(Path(tmp), max_in_flight=slots)
        db = create_engine(cfg.database_url)
        await migrate(db)
        async with Actions(cfg) as client:
            scheduler = Scheduler(db, cfg, client)
            store = PipeStore(scheduler.runs, cfg.database_url, cfg)
            await store._ask("ping")  # the child is up
            scheduler.dispatcher._runs = store  # the prototype: a private swap
            scheduler.recorder._runs = store
            now = datetime.now(UTC)
            due = now + timedelta(seconds=1 + 0.0004 * n)
            await dispatch._insert_jobs(db, url, [due] * n, now)
            c0, k0 = time.process_time(), store.child_cpu()
            scheduler.start()
            while True:
                await asyncio.sleep(0.2)
                async with db.connect() as conn:
                    count = select(func.count()).select_from(job_history)
                    if (await conn.execute(count)).scalar_one() >= n:
                        break
            k1 = store.child_cpu()
            await scheduler.stop()
            cpu = time.process_time() - c0
            store.stop()
        async with db.connect() as conn:
            end = (await conn.execute(select(func.max(job_history.c.end_time)))).scalar_one()
            once = jobs.c.state == "Completed", jobs.c.execution_count == 1
            completed = (await conn.execute(select(func.count()).where(*once))).scalar_one()
        await db.dispose()
    if completed != n:
        print(f"process: {completed}/{n} jobs Completed", file=sys.stderr)
    return n / (end - due).total_seconds(), cpu / n * 1e6, (k1 - k0) / n * 1e6


async def main(args: argparse.Namespace) -> None:
    dispatch.prepare_process()
    n, slots = args.jobs, 500
    rows: list[dict[str, float]] = []
    with sink(record=False) as url:
        for round_ in range(1, args.rounds + 1):
            ceiling = await dispatch.run_ceiling(url, n, slots)
            thread = await dispatch.run_horarium(url, [0.0] * n, slots)
            rate, cpu, child = await run_in_process(url, n, slots)
            memory = await dispatch.run_memory_engine(url, n, slots)
            row = {
                "ceiling": ceiling.rate,
                "ceiling cpu": ceiling.cpu / n * 1e6,
                "thread": thread.rate / ceiling.rate,
                "thread cpu": thread.cpu / n * 1e6,
                "process": rate / ceiling.rate,
                "process cpu": cpu,
                "child cpu": child,
                "memory": memory.rate / ceiling.rate,
                "memory cpu": memory.cpu / n * 1e6,
            }
            rows.append(row)
            print(
                f"round {round_}: ceiling {ceiling.rate:,.0f}/s; share of it: thread "
                f"{row['thread']:.0%}, process {row['process']:.0%}, memory {row['memory']:.0%}",
                flush=True,
            )

    def median(key: str) -> float:
        return statistics.median(row[key] for row in rows)

    def spread(key: str) -> str:
        values = sorted(row[key] for row in rows)
        return f"{median(key):.0%} ({values[0]:.0%}-{values[-1]:.0%})"

    print(f"\n{n} jobs due at once, {len(rows)} rounds: medians (range)")
    print("| system | share of the ceiling | CPU µs / execution |")
    print("|---|---:|---:|")
    print(
        f"| ceiling: the action client alone ({median('ceiling'):,.0f}/s) | – | "
        f"{median('ceiling cpu'):.0f} |"
    )
    print(
        f"| horarium, the store on its thread | {spread('thread')} | {median('thread cpu'):.0f} |"
    )
    print(
        f"| horarium, the store in a child process | {spread('process')} | "
        f"{median('process cpu'):.0f} (+ child {median('child cpu'):.0f}) |"
    )
    print(f"| the engine on an in-memory store | {spread('memory')} | {median('memory cpu'):.0f} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    run(main(parser.parse_args()))
