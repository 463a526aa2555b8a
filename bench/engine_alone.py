"""The engine's own cost per execution: the dispatch benchmark's burst with an action that does
nothing, so that what is measured is the bookkeeping alone (claim, start, record, history,
counters, telemetry).

    .venv/bin/python bench/engine_alone.py [--jobs 20000] [--rounds 3]
    .venv/bin/python bench/engine_alone.py --calls [--jobs 10000]

N one-time jobs stored as the API stores them, due at the same instant, on a SQLite file; the
engine (`Scheduler`, default settings) runs them with an action that yields once and succeeds
with a history message of the HTTP action's form. History and status are written (checked
after each round, as in `bench/dispatch.py`). CPU (from the engine's start to its stop) is split
between the event loop's thread, SQLite's writer thread inside the claim and record transactions,
and the rest of the process; each figure is per execution.
Not a test: prints a table; the median over the rounds goes to docs/benchmarks.md's current
figures.

`--calls` counts instead of timing: one round under `cProfile`, on the event loop (from the
engine's start to its stop) and in each SQLite transaction, and prints the Python function calls
(C functions included) per execution by module and the functions called at least once per
execution. Counts do not depend on the machine's load: an A/B of the hot path's shape.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from support import record_figures, run

MESSAGE = (
    "Http Action - Response from host '127.0.0.1': 'OK' Response Headers: "
    "Content-Length: 2\nBody: ok"
)


class NoAction:
    """An action runner (and the `Actions` context manager the benchmark opens) that yields
    once and succeeds."""

    def __init__(self, settings: Any = None) -> None:
        self.running = 0
        self.peak = 0

    async def __aenter__(self) -> NoAction:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, action: Mapping[str, Any], context: Any) -> Any:
        from horarium.actions.base import ActionResult

        await asyncio.sleep(0)
        return ActionResult(True, MESSAGE)


@dataclass
class Round:
    executions: int
    seconds: float
    cpu: dict[str, float] = field(default_factory=dict)

    def per_execution(self, kind: str) -> float:
        return self.cpu.get(kind, 0.0) / self.executions * 1e6


class Profiled:
    """The event loop's and the SQLite writer's calls in one round, each under `cProfile`."""

    def __init__(self) -> None:
        import cProfile

        self.loop, self.writer = cProfile.Profile(), cProfile.Profile()


async def one_round(jobs: int, profiled: Profiled | None = None) -> Round:
    """One burst; CPU from the engine's start to its stop (the window of `run_horarium`'s own
    CPU figure: storing the jobs and checking the history after are left out): the event
    loop's thread, the SQLite transactions' (the writer thread's CPU inside them) and the
    rest of the process. With `profiled`, each thread's calls over the same windows."""
    import dispatch

    import horarium.actions.runner as runner
    import horarium.engine.scheduler as scheduler
    from horarium.store.runs import transact

    loop: list[float] = []
    writer = [0.0]
    start, stop, write = scheduler.Scheduler.start, scheduler.Scheduler.stop, transact._write

    def marked_start(self: Any) -> None:
        loop.append(time.thread_time())
        if profiled:
            profiled.loop.enable()
        start(self)

    async def marked_stop(self: Any) -> None:
        await stop(self)
        if profiled:
            profiled.loop.disable()
        loop.append(time.thread_time())

    def timed_write(engine: Any, work: Any) -> Any:
        began = time.thread_time()
        if profiled:
            profiled.writer.enable()
        try:
            return write(engine, work)
        finally:
            if profiled:
                profiled.writer.disable()
            writer[0] += time.thread_time() - began

    real = runner.Actions
    runner.Actions = NoAction  # type: ignore[assignment,misc]
    scheduler.Scheduler.start = marked_start  # type: ignore[method-assign]
    scheduler.Scheduler.stop = marked_stop  # type: ignore[method-assign]
    transact._write = timed_write
    try:
        result = await dispatch.run_horarium("http://127.0.0.1:9", [0.0] * jobs)
    finally:
        runner.Actions = real  # type: ignore[misc]
        scheduler.Scheduler.start = start  # type: ignore[method-assign]
        scheduler.Scheduler.stop = stop  # type: ignore[method-assign]
        transact._write = write
    used = {"process": result.cpu, "loop": loop[1] - loop[0], "writer": writer[0]}
    used["other"] = result.cpu - used["loop"] - used["writer"]
    return Round(result.executions, result.seconds, used)


def table(rounds: list[Round]) -> str:
    lines = [
        "| round | executions/s | CPU µs / execution: process | event loop | SQLite writer "
        "| other |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for i, r in enumerate(rounds, 1):
        lines.append(
            f"| {i} | {r.executions / r.seconds:,.0f} | {r.per_execution('process'):.1f} "
            f"| {r.per_execution('loop'):.1f} | {r.per_execution('writer'):.1f} "
            f"| {r.per_execution('other'):.1f} |"
        )
    return "\n".join(lines)


def calls_table(name: str, profile: Any, executions: int) -> str:
    """`profile`'s calls per execution, by module, and its functions called at least once per
    execution (with their own time, inflated by the profiler)."""
    import pstats

    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    by_module: Counter[str] = Counter()
    often: list[tuple[float, float, str]] = []
    for (path, line, function), (_, calls, own, _, _) in stats.items():
        module = _short(path)
        by_module[module] += calls
        if calls >= executions:
            often.append(
                (calls / executions, own / executions * 1e6, f"{module}:{line} {function}")
            )
    total = sum(by_module.values()) / executions
    lines = [f"{name}: {total:.1f} calls per execution", "| calls / execution | module |"]
    lines.append("|---:|---|")
    lines += [
        f"| {n / executions:.2f} | {m} |"
        for m, n in by_module.most_common()
        if n >= executions / 10
    ]
    lines += ["", "| calls / execution | own µs (profiled) | function |", "|---:|---:|---|"]
    lines += [f"| {n:.2f} | {own:.2f} | {f} |" for n, own, f in sorted(often, reverse=True)]
    return "\n".join(lines)


def _short(path: str) -> str:
    for marker in ("site-packages/", "/src/", "python3.11/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path if path != "~" else "(C functions)"


async def count_calls(jobs: int) -> None:
    """One round with the event loop and the SQLite transactions under `cProfile`."""
    profiled = Profiled()
    result = await one_round(jobs, profiled)
    print(f"Engine alone, calls: {jobs} one-time jobs due at once\n")
    print(calls_table("Event loop", profiled.loop, result.executions), end="\n\n")
    print(
        calls_table(
            "SQLite writer (claim and record transactions)", profiled.writer, result.executions
        )
    )


async def main(args: argparse.Namespace) -> None:
    import dispatch

    dispatch.prepare_process()
    if args.calls:
        await count_calls(args.jobs)
        return
    rounds = [await one_round(args.jobs) for _ in range(args.rounds)]
    print(f"Engine alone: {args.jobs} one-time jobs due at once, an action that does nothing\n")
    print(table(rounds))
    process = statistics.median(r.per_execution("process") for r in rounds)
    loop = statistics.median(r.per_execution("loop") for r in rounds)
    writer = statistics.median(r.per_execution("writer") for r in rounds)
    print(f"\nmedian CPU µs / execution: process {process:.1f}", end="")
    print(f", event loop {loop:.1f}, SQLite writer {writer:.1f}")
    figure = f"CPU µs / execution: process (event loop / SQLite writer), median of {args.rounds}"
    record_figures("engine alone", [(figure, f"{process:.0f} ({loop:.0f} / {writer:.0f})")])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", action="store_true", help="count calls per execution instead")
    run(main(parser.parse_args()))
