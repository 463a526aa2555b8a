"""Re-delivery after a crash: `kill -9` of the engine's process at several moments of a burst,
then a restart; what was delivered twice, against the bound docs/engine.md states ("Crash
safety").

    .venv/bin/python bench/redelivery.py [--jobs 3000] [--at 10,30,50,70,90]
        [--postgres postgresql://postgres@127.0.0.1:5432/test] [--databases sqlite,postgres]
        [--max-in-flight 500] [--delay 0.05]

For each database and each moment: a fresh store (a SQLite file, or a fresh PostgreSQL database
made from `--postgres`) holding `--jobs` one-time jobs due at one instant, each an HTTP POST to
a sink (another process) that answers after `--delay` seconds and notes, per request, the
`x-ms-execution-tag` header and when it arrived and was answered. The engine runs in
`horarium serve` (SQLite) or `horarium worker` (PostgreSQL), `--max-in-flight` set. Once the
sink has seen the given percentage of the jobs, the process is killed with SIGKILL; the history
entries it had committed are counted; the same command is started again and runs until every
job has Completed. Columns:

  delivered    distinct execution tags the killed process sent (the sink's requests before the
               restart)
  in flight    of those, requests the sink had not answered when the process was killed
               (attempts running; at most --max-in-flight)
  unrecorded   delivered, answered, and not in the history when the process died: the attempts
               that ended and waited for the recorder (the write under way and what ended
               meanwhile), i.e. what ended within about one record interval of the kill
  lag ms       unrecorded / the sink's delivery rate over the last second before the kill: how
               far the recorder was behind, in time
  re-delivered tags the sink saw twice
  bound        in flight + unrecorded: the executions the store had not recorded as ended; only
               these may run again (the documented cap is 2 x max-in-flight + batch size)

Not a test: prints a Markdown table. The machine's other work shifts every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support import (
    LABELS,
    PG_DEFAULT,
    completed_count,
    free_port,
    fresh_store,
    load,
    load1,
    sink,
    start_horarium,
    stop,
    store_burst,
)

BATCH_SIZE = 200  # the engine's default `--batch-size`


@dataclass
class Kill:
    database: str
    at: int  # percent of the jobs the sink had seen
    delivered: int
    in_flight: int
    unrecorded: int
    lag_ms: float
    redelivered: int
    lost: int
    load: float

    @property
    def bound(self) -> int:
        return self.in_flight + self.unrecorded


def start(url: str, data: Path, args: argparse.Namespace, log: Path) -> subprocess.Popen[bytes]:
    """`serve` on SQLite (the only process it allows), else a `worker`."""
    settings: dict[str, object] = {
        "secret_key": args.key,
        "max_in_flight": args.max_in_flight,
        "batch_size": BATCH_SIZE,
    }
    if url.startswith("sqlite"):
        return start_horarium("serve", url, data, log, port=free_port(), **settings)
    return start_horarium("worker", url, data, log, **settings)


async def history_count(db: Any) -> int:
    from sqlalchemy import func, select

    from horarium.store.core.schema import job_history

    async with db.connect() as conn:
        return int((await conn.execute(select(func.count()).select_from(job_history))).scalar_one())


async def run_kill(database: str, at: int, sink_url: str, args: argparse.Namespace) -> Kill:
    import httpx

    from horarium.store.core.db import create_engine, migrate

    n = args.jobs
    client = httpx.AsyncClient(timeout=30)
    await client.post(f"{sink_url}/__reset")
    async with fresh_store(database, args.postgres) as url:
        db = create_engine(url)
        await migrate(db)
        with tempfile.TemporaryDirectory() as tmp:
            data, log = Path(tmp) / "data", Path(tmp) / "engine.log"
            proc = start(url, data, args, log)
            try:
                await asyncio.sleep(3)  # up and polling
                due = datetime.now(UTC) + timedelta(seconds=2 + n / 5_000)
                await store_burst(db, n, sink_url, due)
                target = n * at // 100
                deadline = time.monotonic() + 120 + n / 50
                while time.monotonic() < deadline:
                    if int((await client.get(f"{sink_url}/__count")).text) >= target:
                        break
                    if proc.poll() is not None:
                        raise RuntimeError(log.read_text())
                    await asyncio.sleep(0.005)
                proc.send_signal(signal.SIGKILL)
                killed = time.time()
                proc.wait()
                recorded = await history_count(db)
                # What the dead process sent and the sink has not read yet is read now; nothing
                # else sends until the restart.
                await asyncio.sleep(1)
                before = json.loads((await client.get(f"{sink_url}/__seen")).text)
                proc = start(url, data, args, log)
                while time.monotonic() < deadline and await completed_count(db) < n:  # noqa: ASYNC110 (another process)
                    await asyncio.sleep(0.5)
                await asyncio.sleep(1)  # a duplicate would arrive late
                seen = json.loads((await client.get(f"{sink_url}/__seen")).text)
            finally:
                stop(proc)
            said = log.read_text(errors="replace").strip()
            if said:
                print(f"{database} at {at} %, the engine said:\n{said[-2000:]}", file=sys.stderr)
        done = await completed_count(db)
        await db.dispose()
    await client.aclose()
    delivered = len({tag for tag, _, _, _ in before})
    answered = sum(1 for _, _, _, end in before if end is not None and end <= killed)
    # per second, just before the kill
    rate = sum(1 for _, _, arrived, _ in before if arrived > killed - 1.0)
    unrecorded = max(0, answered - recorded)
    return Kill(
        database=LABELS[database],
        at=at,
        delivered=delivered,
        in_flight=delivered - answered,
        unrecorded=unrecorded,
        lag_ms=unrecorded / rate * 1000 if rate else float("nan"),
        redelivered=len(seen) - len({tag for tag, _, _, _ in seen}),
        lost=n - done,
        load=load1(),
    )


async def main(args: argparse.Namespace) -> None:
    moments = [int(p) for p in args.at.split(",")]
    cap = 2 * args.max_in_flight + BATCH_SIZE
    print(f"Load average at start: {load()}; {os.cpu_count()} cores\n")
    print(
        f"{args.jobs:,} one-time jobs due at once, sink answering after {args.delay * 1000:.0f}"
        f" ms, --max-in-flight {args.max_in_flight}, --batch-size {BATCH_SIZE}"
        f" (documented cap {cap:,})\n"
    )
    print(
        "| database | killed at | delivered | in flight | unrecorded | lag ms | re-delivered"
        " | bound (in flight + unrecorded) | held | lost | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    with sink(args.delay, backlog=4096) as sink_url:
        for database in args.databases.split(","):
            for at in moments:
                k = await run_kill(database, at, sink_url, args)
                held = k.redelivered <= k.bound and k.redelivered <= cap
                print(
                    f"| {k.database} | {k.at} % | {k.delivered:,} | {k.in_flight}"
                    f" | {k.unrecorded} | {k.lag_ms:.0f} | {k.redelivered}"
                    f" | {k.bound} | {'yes' if held else '**no**'} | {k.lost} | {k.load:.1f} |",
                    flush=True,
                )
    print(f"\nLoad average at end: {load()}")


if __name__ == "__main__":
    import base64

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3000, help="one-time jobs due at once")
    parser.add_argument("--at", default="10,30,50,70,90", help="kill at these %% of the jobs")
    parser.add_argument("--databases", default="sqlite,postgres", help="sqlite, postgres or both")
    parser.add_argument("--postgres", default=PG_DEFAULT, help="server to make databases on")
    parser.add_argument("--max-in-flight", type=int, default=500)
    parser.add_argument("--delay", type=float, default=0.05, help="the sink's answer, seconds")
    arguments = parser.parse_args()
    arguments.key = base64.b64encode(os.urandom(32)).decode()
    asyncio.run(main(arguments))
