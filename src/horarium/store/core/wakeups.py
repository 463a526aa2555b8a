"""Waking the engines of every node when the API writes something that may be due soon.

PostgreSQL: a write transaction `announce`s on one channel (`NOTIFY`, no payload), which the
database delivers when, and only if, it commits; each engine process holds one `Subscription`
(a connection of its own that `LISTEN`s) and wakes its dispatcher on each notification. Several
notifications of one transaction are one; the dispatcher coalesces the rest.

SQLite: one process writes the file, so there is nothing to announce to: the API wakes the
engine of its own process directly (`horarium.engine.service.wake`), and `supported` is False.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

CHANNEL = "horarium_due"
_NOTIFY = f"NOTIFY {CHANNEL}"
# How the listening connection shows in pg_stat_activity (its `query` is the last statement).
APPLICATION_NAME = "horarium listener"


def supported(db: AsyncEngine) -> bool:
    """Whether the database delivers notifications between processes."""
    return db.dialect.name == "postgresql"


async def announce(conn: AsyncConnection) -> None:
    """In a write transaction: wake the listening engines once it commits (PostgreSQL only)."""
    if conn.dialect.name == "postgresql":
        await conn.exec_driver_sql(_NOTIFY)


class Subscription:
    """One connection listening on the channel, named `APPLICATION_NAME`; `on_wake` is called
    in the event loop for each notification. Taken from the engine's pool (its connect arguments
    and time-out apply) and closed, never handed back, at the end."""

    def __init__(self, raw: Any, on_wake: Callable[[], None]) -> None:
        self._raw = raw  # the pool's proxy of the driver connection
        self._conn = raw.driver_connection  # asyncpg.Connection
        self._on_wake = on_wake
        self.lost = asyncio.Event()  # set when the driver sees the connection close

    @classmethod
    async def open(cls, db: AsyncEngine, on_wake: Callable[[], None]) -> Subscription:
        raw = await db.raw_connection()
        subscription = cls(raw, on_wake)
        try:
            subscription._conn.add_termination_listener(subscription._terminated)
            await subscription._conn.execute(f"SET application_name = '{APPLICATION_NAME}'")
            await subscription._conn.add_listener(CHANNEL, subscription._notified)
        except BaseException:
            subscription._discard()
            raise
        return subscription

    def _notified(self, *_: Any) -> None:
        self._on_wake()

    def _terminated(self, *_: Any) -> None:
        self.lost.set()

    async def check(self) -> None:
        """One round trip on the connection; raises when it is gone (the caller bounds how long
        it may take: a network that drops packets closes nothing)."""
        await self._conn.execute("SELECT 1")

    async def close(self) -> None:
        self._discard()

    def _discard(self) -> None:
        # The connection listened: never back into the pool. Invalidating closes it without a
        # round trip (the database may be gone).
        try:
            self._raw.invalidate()
        except Exception:
            pass
