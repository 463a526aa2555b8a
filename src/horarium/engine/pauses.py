"""The periodic task that ends pauses (`store.runs.pauses`): every `poll_interval` it looks up when
the next pause ends (an index lookup) and, once one has, enables what it paused and wakes the
dispatcher, so the executions that fell due meanwhile are decided at once."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.clock import Clock
from horarium.engine.periodic import every
from horarium.store.runs.pauses import Ended, end_due, next_end


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
    async def round_() -> None:
        ended = await end_pauses_once(db, clock)
        if ended.jobs or ended.collections:
            wake()

    await every(interval, "ending pauses", round_)
