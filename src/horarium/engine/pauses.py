"""The periodic task that ends pauses (`store.runs.pauses`): every `poll_interval` it looks up when
the next pause ends (an index lookup) and, once one has, enables what it paused and wakes the
dispatcher, so the executions that fell due meanwhile are decided at once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.clock import Clock
from horarium.store.core.outages import is_outage
from horarium.store.runs.pauses import Ended, end_due, next_end

log = logging.getLogger(__name__)


async def end_pauses_once(db: AsyncEngine, clock: Clock) -> Ended:
    """Enable what is paused until now or earlier."""
    now = clock.now()
    upcoming = await next_end(db)
    if upcoming is None or upcoming > now:
        return Ended()
    return await end_due(db, now)


async def end_pauses_forever(
    db: AsyncEngine, clock: Clock, interval: float, wake: Callable[[], None]
) -> None:
    while True:
        try:
            ended = await end_pauses_once(db, clock)
            if ended.jobs or ended.collections:
                wake()
        except Exception as exc:
            if not is_outage(exc):
                log.exception("ending pauses failed")
            # else: the engine's other transactions report the outage, once
        await asyncio.sleep(interval)
