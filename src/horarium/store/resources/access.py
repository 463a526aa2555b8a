"""Transactions for the management API.

Writes go through `store.core.db.write_transaction` (on SQLite: `BEGIN IMMEDIATE` under the
process's one write lock, shared with the engine); a hot write written as one blocking function
(a check-in) goes through the `transactor` instead (`store.runs.transact`: on SQLite one hop to
a writer thread, under the same lock). On PostgreSQL the API locks the collection
row it writes under. A write that lost a race (a unique key, a deadlock) is retried from the
start.
A write that may make work due sooner passes `wake`: on PostgreSQL the transaction also
notifies the engines of every node, delivered on commit (`store.core.wakeups`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from horarium.store.core import wakeups
from horarium.store.core.db import write_transaction
from horarium.store.runs.transact import Transactor

T = TypeVar("T")

_RETRYABLE_PG_CODES = {"40001", "40P01"}  # serialization failure, deadlock


class Store:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        # For a hot write done as one blocking function (a check-in: `api.ping_ops`); its
        # thread and SQLite connection open on first use.
        self.transactor = Transactor(engine)

    async def close(self) -> None:
        """Close what the transactor opened (the engine itself is the caller's)."""
        await self.transactor.close()

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as conn:
            yield conn

    async def write(
        self,
        work: Callable[[AsyncConnection], Awaitable[T]],
        attempts: int = 3,
        *,
        wake: bool = False,
    ) -> T:
        """Run `work` in one write transaction, retrying it when it lost a race; `wake`: the
        engines listening are woken when it commits."""
        for attempt in range(attempts):
            try:
                async with write_transaction(self.engine) as conn:
                    result = await work(conn)
                    if wake:
                        await wakeups.announce(conn)
                    return result
            except (IntegrityError, DBAPIError) as e:
                if attempt + 1 >= attempts or not _retryable(e):
                    raise
        raise AssertionError("unreachable")


def _retryable(error: DBAPIError) -> bool:
    if isinstance(error, IntegrityError):
        return True
    code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    return code in _RETRYABLE_PG_CODES
