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
are network waits, and several processes claim concurrently with `SKIP LOCKED`). A transaction
that fails for a transient reason — PostgreSQL chose it as a deadlock's victim, a serialization
failure, the connection was lost — is run again from the start, a few times with a growing
pause, each retry logged once (`transient`). Every engine transaction may run twice: a
record or a renewal written already finds its leases moved on and writes nothing more; a claim
whose commit was lost leaves rows leased to this process until their lease runs out.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.db import sqlite_write_lock, sync_sqlite_engine

T = TypeVar("T")

log = logging.getLogger("horarium.store.transact")  # the name its log lines have always carried

# SQLSTATEs of a transaction PostgreSQL aborted that succeeds when run again.
TRANSIENT_STATES = {
    "40P01": "deadlock detected",
    "40001": "serialization failure",
}
RETRIES = 4  # runs again after a transient failure, at most
FIRST_PAUSE = 0.05  # seconds before the first retry; doubled for each next one (with jitter)


class Transactor:
    def __init__(self, db: AsyncEngine) -> None:
        self.db = db
        self.sqlite = db.dialect.name == "sqlite"
        # SQLite: the blocking engine the functions run on (no connection until first used).
        self.sync_engine: Engine | None = sync_sqlite_engine(db) if self.sqlite else None
        self._thread: ThreadPoolExecutor | None = None

    async def write(self, work: Callable[[Connection], T], what: str = "transaction") -> T:
        """`work(conn)` in a write transaction: committed when it returns, rolled back when it
        raises; run again after a transient failure (`what` names it in the log)."""
        if not self.sqlite:
            return await _retrying(lambda: self._pg_write(work), what)
        async with sqlite_write_lock(self.db):
            return await self._on_thread(_write, work)

    async def read(self, work: Callable[[Connection], T], what: str = "read") -> T:
        """`work(conn)` on a connection that writes nothing."""
        if not self.sqlite:
            return await _retrying(lambda: self._pg_read(work), what)
        return await self._on_thread(_read, work)

    async def _pg_write(self, work: Callable[[Connection], T]) -> T:
        async with self.db.begin() as conn:
            return await conn.run_sync(work)

    async def _pg_read(self, work: Callable[[Connection], T]) -> T:
        async with self.db.connect() as conn:
            return await conn.run_sync(work)

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


def transient(exc: BaseException) -> str | None:
    """Why `exc` is a transient failure that running the transaction again may overcome (a
    deadlock's victim, a serialization failure, a lost connection); None when it is not."""
    if isinstance(exc, DBAPIError):
        state = str(getattr(exc.orig, "sqlstate", None) or "")
        if state in TRANSIENT_STATES:
            return TRANSIENT_STATES[state]
        lost = exc.connection_invalidated or state.startswith("08")  # class 08: connection
        return "connection lost" if lost or isinstance(exc.orig, OSError) else None
    if isinstance(exc, OSError | ConnectionError):
        return "connection lost"
    return None


async def _retrying(run: Callable[[], Awaitable[T]], what: str) -> T:
    """`run()`, run again after each transient failure, at most RETRIES times."""
    pause = FIRST_PAUSE
    for retry in range(1, RETRIES + 1):
        try:
            return await run()
        except Exception as exc:
            reason = transient(exc)
            if reason is None:
                raise
            wait = pause * random.uniform(0.5, 1.5)
            log.warning(
                "%s failed (%s); running it again in %.2f s (retry %d of %d)",
                what,
                reason,
                wait,
                retry,
                RETRIES,
            )
            await asyncio.sleep(wait)
            pause *= 2
    return await run()


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
