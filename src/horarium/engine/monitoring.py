"""The periodic task that watches check-in monitors (`store.runs.monitor_checks`): every
`poll_interval` it looks up when the earliest monitor is due (an index lookup) and, once one
is, judges the due ones — so a missed check-in becomes Late or Down at most one
`--poll-interval` after its time."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.clock import Clock
from horarium.engine.periodic import every
from horarium.store.runs.monitor_checks import Judged, judge_due, next_due
from horarium.store.runs.transact import Transactor


async def watch_monitors_once(db: AsyncEngine, transactor: Transactor, clock: Clock) -> Judged:
    """Judge the monitors due now or earlier (`transactor`: the engine's, on `db`)."""
    now = clock.now()
    upcoming = await next_due(db)
    if upcoming is None or upcoming > now:
        return Judged()
    return await judge_due(transactor, now)


async def watch_monitors_forever(
    db: AsyncEngine, transactor: Transactor, clock: Clock, interval: float
) -> None:
    await every(interval, "watching monitors", lambda: watch_monitors_once(db, transactor, clock))
