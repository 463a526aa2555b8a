"""The periodic task that watches jobs' `executionPolicy.deadlines` (`store.runs.deadlines`):
every `poll_interval` it looks whether anything may be due (a read, no write lock) and, when
so, raises the ExecutionLate and ExecutionOverran that have fallen due — at most one
`--poll-interval` after their deadline — and counts them (`horarium_executions_late`,
`horarium_executions_overran`)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.clock import Clock
from horarium.engine.periodic import every
from horarium.observe import metrics
from horarium.store.runs.deadlines import Raised, anything_due, judge_due


async def watch_deadlines_once(db: AsyncEngine, clock: Clock) -> Raised:
    """Raise the deadline events due now or earlier."""
    now = clock.now()
    if not await anything_due(db, now):
        return Raised()
    raised = await judge_due(db, now)
    if raised.late:
        metrics.DEADLINES_LATE.inc(raised.late)
    if raised.overran:
        metrics.DEADLINES_OVERRAN.inc(raised.overran)
    return raised


async def watch_deadlines_forever(db: AsyncEngine, clock: Clock, interval: float) -> None:
    await every(interval, "watching deadlines", lambda: watch_deadlines_once(db, clock))
