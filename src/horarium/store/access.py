"""Transactions for the management API.

On SQLite every write transaction starts with `BEGIN IMMEDIATE` under an in-process lock (the
database has one writer; the API's writers queue in asyncio, and a read-then-write can never
fail on a stale snapshot). On PostgreSQL the API locks the collection row it writes under. A
write that lost a race (a unique key, a deadlock) is retried from the start.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

T = TypeVar("T")

_RETRYABLE_PG_CODES = {"40001", "40P01"}  # serialization failure, deadlock


class Store:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sqlite = engine.dialect.name == "sqlite"
        self._write_lock = asyncio.Lock()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        if self.sqlite:
            async with self._write_lock, self.engine.connect() as conn:
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    await conn.rollback()
                    raise
                await conn.commit()
        else:
            async with self.engine.begin() as conn:
                yield conn

    async def write(self, work: Callable[[AsyncConnection], Awaitable[T]], attempts: int = 3) -> T:
        """Run `work` in one write transaction, retrying it when it lost a race."""
        for attempt in range(attempts):
            try:
                async with self._write() as conn:
                    return await work(conn)
            except (IntegrityError, DBAPIError) as e:
                if attempt + 1 >= attempts or not _retryable(e):
                    raise
        raise AssertionError("unreachable")


def _retryable(error: DBAPIError) -> bool:
    if isinstance(error, IntegrityError):
        return True
    code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    return code in _RETRYABLE_PG_CODES
