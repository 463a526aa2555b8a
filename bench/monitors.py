"""Check-in monitors benchmark: 10,000 monitors expecting a check-in every minute, on SQLite.

    .venv/bin/python bench/monitors.py [--monitors 10000] [--minutes 1] [--concurrency 16]
        [--warm-up 500] [--in-process 1000]  (0: leave step 5 out)

1. A SQLite store with `--monitors` monitors in P20Premium collections of 1,000 (every minute,
   grace 5 minutes, Up, each expecting its next check-in at the coming minute), as the API's
   `store.resources.monitors.insert_one` writes them, each with a ping token of its own.
2. `horarium serve` (its engine in the process, as a SQLite deployment runs it; the defaults,
   `--poll-interval 1`, the access log off) answers the check-ins.
3. After `--warm-up` check-ins at the same pace (the first requests after a start pay for
   connections, compiled statements and cold pages: their latencies are printed on a line of
   their own), measured, for `--minutes`: every monitor checks in once a minute, spread evenly
   over the minute (`--concurrency` at most in flight), `POST /ping/{token}` with a short body.
   Latency = from sending to the answer, on keep-alive connections (httpx, asyncio; the client
   collects no garbage while it measures). The CPU the hypervisor gave to other guests meanwhile
   is printed: a run whose worst half-second lost a fifth or more was not quiet. Server CPU
   = the serve process's CPU time over the window, per check-in (API and engine together: when
   the minute turns, the engine judges Late every monitor that has not checked in yet — its
   expected instant passed — and its check-in then makes it Up again).
4. Then the worst minute for the engine, in this process: every monitor's check-in is overdue at
   once, and `store.runs.monitor_checks.judge_due` turns all of them Late (no notifications):
   CPU per monitor judged — a bound on the engine's evaluation cost per monitor per minute —
   and the wall-clock time the pass took (the write lock's, which check-ins wait behind).
5. Last, the check-in's transaction alone, in this process: `--in-process` check-ins through
   `api.ping_ops` one at a time, then as many 16 at once (CPU of this process, all threads).

Not a test: prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import inspect
import secrets
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from support import (
    TICKS,
    StolenCpu,
    add_collections,
    cpu_ticks,
    free_port,
    load,
    percentile,
    record_figures,
    start_horarium,
    stop,
    wait_port,
)

PER_COLLECTION = 1000


async def store_monitors(url: str, count: int, now: datetime) -> list[str]:
    """`count` every-minute monitors, Up, expecting their check-in at the next minute; their
    tokens."""
    from sqlalchemy import insert

    from horarium.store.core.db import create_engine, migrate
    from horarium.store.core.schema import monitors

    db = create_engine(url)
    await migrate(db)
    expected = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    tokens = [secrets.token_urlsafe(32) for _ in range(count)]
    async with db.begin() as conn:
        names = [f"c{i}" for i in range((count + PER_COLLECTION - 1) // PER_COLLECTION)]
        collections = await add_collections(conn, names, now)
        rows = [
            {
                "collection_id": collections[i // PER_COLLECTION],
                "key": f"m{i}",
                "name": f"m{i}",
                "definition": {"recurrence": {"frequency": "Minute"}, "grace": "00:05:00"},
                "state": "Enabled",
                "schedule_set_at": now - timedelta(hours=1),
                "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
                "status": "Up",
                "expected_at": expected,
                "due_at": expected,
                "created_at": now,
                "updated_at": now,
            }
            for i, token in enumerate(tokens)
        ]
        for start in range(0, len(rows), 1000):
            await conn.execute(insert(monitors), rows[start : start + 1000])
    await db.dispose()
    return tokens


async def check_in(
    base: str, tokens: list[str], minutes: int, concurrency: int, warm_up: int
) -> tuple[list[float], list[float]]:
    """Every token once a minute, spread evenly, after `warm_up` check-ins at the same pace;
    the latencies (seconds) of the warm-up and of the measured ones. Each check-in's task is
    made at its instant (making all of them up front kept the client busy for a second)."""
    measured: list[float] = []
    warming: list[float] = []
    refused: list[str] = []
    gate = asyncio.Semaphore(concurrency)
    step = 60.0 / len(tokens)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as client:

        async def one(token: str, latencies: list[float]) -> None:
            async with gate:
                sent = time.perf_counter()
                answer = await client.post(f"/ping/{token}", content=b"backup done: 42 files")
                latencies.append(time.perf_counter() - sent)
            if answer.status_code != 200:
                refused.append(f"{answer.status_code}: {answer.text}")

        # The client's own garbage collections (tens of ms) would count as check-in latency:
        # it collects none while it measures, and keeps no task past its end.
        gc.collect()
        gc.disable()
        start = time.monotonic()
        sending: set[asyncio.Task[None]] = set()
        first = tokens[len(tokens) - warm_up :]  # monitors that check in again at the end
        plan = [*first, *(t for _ in range(minutes) for t in tokens)]
        for k, token in enumerate(plan):
            delay = start + k * step - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            latencies = warming if k < warm_up else measured
            task = asyncio.create_task(one(token, latencies))
            sending.add(task)
            task.add_done_callback(sending.discard)
        await asyncio.gather(*sending)
        gc.enable()
    if refused:
        raise RuntimeError(f"{len(refused)} check-ins refused, the first: {refused[0]}")
    return warming, measured


async def in_process(
    url: str, tokens: list[str], count: int
) -> list[tuple[int, float, float, float]]:
    """The check-in's transaction alone (`api.ping_ops`, no HTTP, no engine), `count` check-ins
    one at a time and then 16 at once: (at once, CPU seconds per check-in, p50 s, p99 s)."""
    from horarium.api import ping_ops
    from horarium.model.monitor import CheckInKind
    from horarium.store.core.db import create_engine
    from horarium.store.resources.access import Store

    db = create_engine(url)
    store = Store(db)
    keys = iter(hashlib.sha256(t.encode()).hexdigest() for t in tokens)

    async def one(key: str) -> None:
        now = datetime.now(UTC)
        if hasattr(ping_ops, "CheckIn"):  # one transaction run in one go
            check = ping_ops.CheckIn(key, CheckInKind.SUCCESS, None, "done", now)
            await ping_ops.check_in(store.transactor, check)
        else:  # trees before 2026-11-27 (A/B runs): the async write path
            kind = CheckInKind.SUCCESS
            await store.write(lambda c: ping_ops.check_in(c, key, kind, None, "done", now))

    await one(next(keys))  # connections opened, statements compiled

    async def timed(gate: asyncio.Semaphore, latencies: list[float], key: str) -> None:
        async with gate:
            sent = time.perf_counter()
            await one(key)
            latencies.append(time.perf_counter() - sent)

    found = []
    for at_once in (1, 16):
        gate = asyncio.Semaphore(at_once)
        latencies: list[float] = []
        before = time.process_time()
        await asyncio.gather(*(timed(gate, latencies, next(keys)) for _ in range(count)))
        cpu = (time.process_time() - before) / count
        found.append((at_once, cpu, percentile(latencies, 0.5), percentile(latencies, 0.99)))
    if hasattr(store, "close"):
        await store.close()
    await db.dispose()
    return found


async def worst_minute(url: str, count: int) -> tuple[float, float, int]:
    """CPU and wall-clock seconds of judging every monitor overdue at once, and how many
    changed."""
    from sqlalchemy import update

    from horarium.store.core.db import create_engine
    from horarium.store.core.schema import monitors
    from horarium.store.runs.monitor_checks import judge_due
    from horarium.store.runs.transact import Transactor

    db = create_engine(url)
    past = datetime.now(UTC) - timedelta(seconds=30)
    async with db.begin() as conn:
        await conn.execute(
            update(monitors).values(status="Up", expected_at=past, due_at=past, started_at=None)
        )
    began = time.perf_counter()
    before = time.process_time()
    if "transactor" in inspect.signature(judge_due).parameters:  # judge_due(transactor, now)
        transactor = Transactor(db)
        judged = await judge_due(transactor, datetime.now(UTC))
        spent = time.process_time() - before
        await transactor.close()
    else:
        judged = await judge_due(db, datetime.now(UTC))  # trees before 2026-11-27 (A/B runs)
        spent = time.process_time() - before
    took = time.perf_counter() - began
    await db.dispose()
    assert judged.changed == count, judged
    return spent, took, judged.changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--monitors", type=int, default=10_000)
    parser.add_argument("--minutes", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--in-process", type=int, default=1000)
    parser.add_argument(
        "--warm-up",
        type=int,
        default=500,
        help="check-ins sent first at the same pace, not measured (their latencies: a line)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = f"sqlite:///{folder}/store.sqlite3"
        tokens = asyncio.run(store_monitors(url, args.monitors, datetime.now(UTC)))
        port = free_port()
        api = start_horarium(
            "serve", url, folder / "api", folder / "api.log", port=port, auth="none",
            access_log="false",
        )  # fmt: skip
        try:
            wait_port(port, 60)
            time.sleep(3)  # the engine's start-up is not measured
            ticks = cpu_ticks(api.pid)
            started = time.monotonic()
            base = f"http://127.0.0.1:{port}"
            with StolenCpu() as stolen:
                warming, latencies = asyncio.run(
                    check_in(base, tokens, args.minutes, args.concurrency, args.warm_up)
                )
            window = time.monotonic() - started
            server_cpu = (cpu_ticks(api.pid) - ticks) / TICKS
        finally:
            stop(api)
        spent, took, changed = asyncio.run(worst_minute(url, args.monitors))
        count = min(args.in_process, len(tokens) // 2 - 1)
        alone = asyncio.run(in_process(url, tokens, count)) if count > 0 else []
    per_check_in = server_cpu / (len(latencies) + len(warming)) * 1e6  # warm-up included
    print(f"load {load()}; {args.monitors} monitors, {len(latencies)} check-ins in {window:.1f} s")
    print(f"CPU stolen by the hypervisor over the window: {stolen}")
    if warming:
        print(
            f"warm-up (not in the table): {len(warming)} check-ins after the start, p50"
            f" {percentile(warming, 0.5) * 1000:.1f} ms, max {max(warming) * 1000:.1f} ms"
        )
    print(
        "| check-ins | p50 ms | p99 ms | max ms | server CPU µs / check-in |"
        " worst minute: µs / monitor judged Late | worst minute: s to judge all |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {len(latencies):,} | {percentile(latencies, 0.5) * 1000:.1f}"
        f" | {percentile(latencies, 0.99) * 1000:.1f} | {max(latencies) * 1000:.1f}"
        f" | {per_check_in:.0f} | {spent / changed * 1e6:.0f}"
        f" | {took:.1f} |"
    )
    p50, p99, top = (
        x * 1000 for x in (percentile(latencies, 0.5), percentile(latencies, 0.99), max(latencies))
    )
    record_figures(
        "monitors",
        [
            (
                f"check-in p50 / p99 / max ms, {args.monitors:,} every-minute monitors",
                f"{p50:.1f} / {p99:.1f} / {top:.1f}",
            ),
            ("serve CPU µs / check-in (API and engine)", f"{per_check_in:.0f}"),
            ("engine: CPU µs / monitor judged", f"{spent / changed * 1e6:.0f}"),
            ("CPU stolen by the hypervisor over the window (worst half-second)", str(stolen)),
        ],
    )
    if not alone:
        return
    print()
    print("The check-in's transaction alone, in-process (no HTTP, no engine):")
    print("| at once | CPU µs / check-in | p50 ms | p99 ms |")
    print("|---:|---:|---:|---:|")
    for at_once, cpu, p50, p99 in alone:
        print(f"| {at_once} | {cpu * 1e6:.0f} | {p50 * 1000:.1f} | {p99 * 1000:.1f} |")


if __name__ == "__main__":
    main()
