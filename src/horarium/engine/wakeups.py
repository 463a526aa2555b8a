"""Cross-node wake-ups: the engine listens for the API's writes on every node (PostgreSQL
`LISTEN/NOTIFY`, `store.core.wakeups`) and looks for due work at once rather than within its poll
interval.

One connection of its own per engine process. Whenever it is (re)opened the dispatcher is woken
once: notifications sent while it was away are lost, and the look catches up on them. It is
checked every CHECK_INTERVAL seconds (one round trip: a network that drops packets closes
nothing); when it is lost it is opened again at once, and while opening fails, again after the
engine's back-off. An outage is reported through the engine's `Reachability` (once for the whole
engine); meanwhile the poll interval still bounds how late a write is noticed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.reachability import BACKOFF_FIRST, BACKOFF_MAX, Reachability
from horarium.engine.tasks import cancel_and_wait
from horarium.store.core import wakeups
from horarium.store.core.outages import one_line
from horarium.store.core.wakeups import Subscription

log = logging.getLogger(__name__)

CHECK_INTERVAL = 5.0  # seconds between two checks of the listening connection
CHECK_TIMEOUT = 5.0  # seconds a check may take


class WakeListener:
    def __init__(
        self, db: AsyncEngine, wake: Callable[[], None], reachability: Reachability
    ) -> None:
        self._db = db
        self._wake = wake
        self._reachability = reachability
        self._task: asyncio.Task[None] | None = None
        self._subscription: Subscription | None = None
        self._failing = False  # a failure that is not an outage was logged

    @property
    def listening(self) -> bool | None:
        """Whether the listening connection is open now; None on a database that delivers no
        notifications (SQLite)."""
        if not wakeups.supported(self._db):
            return None
        return self._subscription is not None and not self._subscription.lost.is_set()

    def start(self) -> None:
        if wakeups.supported(self._db):
            self._task = asyncio.create_task(self._listen_forever(), name="horarium-wakeups")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)
        await self._drop()

    async def _listen_forever(self) -> None:
        failures = 0
        while True:
            try:
                self._subscription = await Subscription.open(self._db, self._wake)
            except Exception as exc:
                await asyncio.sleep(self._failed(exc, failures))
                failures += 1
                continue
            self._wake()  # what was written while nobody listened
            failures = 0
            self._failing = False
            try:
                await self._watch(self._subscription)
            except Exception as exc:
                # Opened again at once; if the database is away, opening reports it.
                log.info("the connection listening for writes was lost (%s)", one_line(exc))
            await self._drop()

    async def _watch(self, subscription: Subscription) -> None:
        """Return never; raise once the connection is lost."""
        while True:
            try:
                await asyncio.wait_for(subscription.lost.wait(), CHECK_INTERVAL)
            except TimeoutError:
                async with asyncio.timeout(CHECK_TIMEOUT):
                    await subscription.check()
                continue
            raise ConnectionError("the database closed it")

    def _failed(self, exc: Exception, failures: int) -> float:
        wait = self._reachability.failed(exc)
        if wait is not None:
            return wait
        if not self._failing:
            log.warning(
                "cannot listen for the API's writes (%s); due work is still found within the"
                " poll interval, and listening is tried again",
                one_line(exc),
            )
            self._failing = True
        return min(BACKOFF_FIRST * 2.0**failures, BACKOFF_MAX)

    async def _drop(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            await subscription.close()
