"""Cost of the due-backlog counts with many jobs stored (none due, all due and unclaimed, all
due and held by a process): the one `/metrics` runs when scraped
(`horarium.store.core.probes.due_backlog`) and the dashboard's engine page's, which also counts
what collections that are not Enabled hold back (`store.resources.engine_status.due_backlog`).

    .venv/bin/python bench/backlog.py [--jobs 100000] [--postgres postgresql://…/db]

Prints the median and the slowest of 20 counts per case and count. Not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support import add_collections, insert_jobs, job_row


async def _store_jobs(db: Any, n: int, due: datetime, now: datetime) -> None:
    """`n` jobs due at `due`, in one collection and one transaction."""
    action = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/x", "method": "GET"}}
    async with db.begin() as conn:
        (collection,) = await add_collections(conn, ["c"], now)
        rows = [job_row(collection, i, {"action": action}, due, now) for i in range(n)]
        await insert_jobs(conn, rows)


async def _set(db: Any, **values: Any) -> None:
    from sqlalchemy import update

    from horarium.store.core.schema import jobs

    async with db.begin() as conn:
        await conn.execute(update(jobs).values(**values))


async def _time_counts(
    db: Any, count: Callable[[Any, datetime], Awaitable[int]], now: datetime, rounds: int = 20
) -> tuple[float, float, int]:
    times = []
    found = 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        async with db.connect() as conn:
            found = await count(conn, now)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), max(times), found


async def _gauge(conn: Any, now: datetime) -> int:
    from horarium.store.core.probes import due_backlog

    return await due_backlog(conn, now)


async def _engine_page(conn: Any, now: datetime) -> int:
    from horarium.store.resources.engine_status import due_backlog

    backlog = await due_backlog(conn, now)
    return backlog.jobs + backlog.executions


async def run(url: str, n: int) -> list[str]:
    from horarium.store.core.db import create_engine, migrate

    db = create_engine(url)
    lines = []
    try:
        await migrate(db)
        now = datetime.now(UTC)
        await _store_jobs(db, n, now + timedelta(days=1), now)
        cases = [
            ("none due", {}),
            ("all due, unclaimed", {"next_execution_at": now - timedelta(seconds=1)}),
            (
                "all due, held by a process",
                {"lease_owner": "bench:1:x", "lease_expires_at": now + timedelta(minutes=5)},
            ),
        ]
        for name, change in cases:
            if change:
                await _set(db, **change)
            for which, count in (("/metrics gauge", _gauge), ("engine page", _engine_page)):
                median, slowest, found = await _time_counts(db, count, now)
                lines.append(
                    f"| {db.dialect.name} | {n:,} | {name} | {which} | {found:,} "
                    f"| {median * 1e3:.2f} ms | {slowest * 1e3:.2f} ms |"
                )
    finally:
        await db.dispose()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--postgres", help="an empty PostgreSQL database to fill (optional)")
    args = parser.parse_args()
    print("| database | jobs | case | count | backlog | median | slowest |")
    print("|---|---:|---|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for line in asyncio.run(run(f"sqlite:///{Path(tmp) / 'b.sqlite3'}", args.jobs)):
            print(line, flush=True)
    if args.postgres:
        for line in asyncio.run(run(args.postgres, args.jobs)):
            print(line, flush=True)


if __name__ == "__main__":
    main()
