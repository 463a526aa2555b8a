"""Running the engine's transactions: each is a plain function of a SQLAlchemy `Connection`,
run in one go.

On SQLite the function runs on a thread of its own with a blocking connection to the same file
(`BEGIN IMMEDIATE` … `COMMIT`), under the process's write lock: a whole claim or record is one
hop from the event loop to that thread and back, and its Python work is done off the event
loop's turns (through the async driver every statement would be three or four hops, each
waiting its turn behind everything else a busy loop has to do; docs/benchmarks.md). A cancelled
caller does not stop a transaction already on the thread: it commits, and its result is lost to
the caller.

On PostgreSQL the same function runs under `AsyncConnection.run_sync` (asyncpg: its round trips
are network waits, and several processes claim concurrently with `SKIP LOCKED`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.db import sqlite_write_lock, sync_sqlite_engine

T = TypeVar("T")


class Transactor:
    def __init__(self, db: AsyncEngine) -> None:
        self.db = db
        self.sqlite = db.dialect.name == "sqlite"
        # SQLite: the blocking engine the functions run on (no connection until first used).
        self.sync_engine: Engine | None = sync_sqlite_engine(db) if self.sqlite else None
        self._thread: ThreadPoolExecutor | None = None

    async def write(self, work: Callable[[Connection], T]) -> T:
        """`work(conn)` in a write transaction: committed when it returns, rolled back when it
        raises."""
        if not self.sqlite:
            async with self.db.begin() as conn:
                return await conn.run_sync(work)
        async with sqlite_write_lock(self.db):
            return await self._on_thread(_write, work)

    async def read(self, work: Callable[[Connection], T]) -> T:
        """`work(conn)` on a connection that writes nothing."""
        if not self.sqlite:
            async with self.db.connect() as conn:
                return await conn.run_sync(work)
        return await self._on_thread(_read, work)

    async def close(self) -> None:
        """Close the writer thread's connection (opened again if used again)."""
        if self._thread is not None and self.sync_engine is not None:
            thread, self._thread = self._thread, None
            await asyncio.get_running_loop().run_in_executor(thread, self.sync_engine.dispose)
            thread.shutdown(wait=False)

    async def _on_thread(
        self, run: Callable[[Engine, Callable[[Connection], T]], T], work: Callable[[Connection], T]
    ) -> T:
        assert self.sync_engine is not None
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="horarium-sqlite")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, run, self.sync_engine, work)


def _write(engine: Engine, work: Callable[[Connection], T]) -> T:
    with engine.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            result = work(conn)
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
        return result


def _read(engine: Engine, work: Callable[[Connection], T]) -> T:
    with engine.connect() as conn:
        return work(conn)
