"""Enabling a job again (its own PATCH, or its collection's enable): what its state becomes when
its series has nothing left to schedule."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.enums import JobState
from horarium.model.schedule import Timing
from horarium.store.resources import run_requests
from horarium.store.resources.jobs import JobRecord


async def resumed_state(conn: AsyncConnection, job: JobRecord, timed: Timing) -> str:
    """`timed.state`, except that a series whose last execution still has a retry or its error
    action to come (enabled again before that fell due) stays Enabled: that attempt runs, and
    its record ends the job."""
    if timed.state == JobState.COMPLETED and await run_requests.continues_series(
        conn, job.id, job.schedule_set_at
    ):
        return JobState.ENABLED
    return timed.state
