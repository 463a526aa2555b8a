"""Enabling a job again (its own PATCH, or its collection's enable): what its state becomes when
its series has nothing left to schedule."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.schedule import Timing
from horarium.store import runs
from horarium.store.jobs import JobRecord


async def resumed_state(conn: AsyncConnection, job: JobRecord, timed: Timing) -> str:
    """`timed.state`, except that a series whose last execution still has a retry or its error
    action to come (enabled again before that fell due) stays Enabled: that attempt runs, and
    its record ends the job."""
    if timed.state == "Completed" and await runs.continues_series(
        conn, job.id, job.schedule_set_at
    ):
        return "Enabled"
    return timed.state
