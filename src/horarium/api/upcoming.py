"""Beyond Azure: the next executions of a job (stored, or a definition not saved yet), in UTC and
on the job's wall clock, with what daylight saving time and exclusion calendars do to them, and
the job's `executionPolicy`: a stored job's executions already due that no process has run yet
are marked `overdue`, with what its missed policy does with them (`ifMissed`). Beside the
executions, `scheduleDescription`: the schedule in words (`recurrence.describe`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import evaluation, job_ops
from horarium.api.calendar_ops import resolve as resolve_calendars
from horarium.api.collection_ops import require as require_collection
from horarium.api.offload import evaluate
from horarium.model.enums import FINAL_JOB_STATES
from horarium.model.job import DESCRIPTION, describe_schedule, parse_job, properties_of
from horarium.model.names import CollectionName, check_job_name
from horarium.model.schedule import lists_calendars
from horarium.store.resources import jobs


async def for_job(
    conn: AsyncConnection, name: CollectionName, job_name: str, count: int, now: datetime
) -> dict[str, Any]:
    """A stored job: from its next execution; a job not scheduled now (Disabled, or in a
    collection that is not Enabled): from where it would resume if enabled now."""
    collection = await require_collection(conn, name)
    job = await job_ops.require(conn, collection, job_name)
    final = job.state in FINAL_JOB_STATES
    due = job.next_execution_at
    running = not final and due is not None and await jobs.in_flight(conn, job.id, now)
    listing = await evaluate(
        lists_calendars(job.definition),
        evaluation.stored_listing,
        job.definition,
        job.schedule_set_at,
        due,
        job.next_repeat,
        count,
        now,
        final=final,
        running=running,
    )
    return _described(listing, job.definition, job.schedule_set_at)


async def for_definition(
    conn: AsyncConnection, name: CollectionName, job_name: str, raw: Any, count: int, now: datetime
) -> dict[str, Any]:
    """An unsaved definition, as if it were created now."""
    check_job_name(job_name)
    definition = parse_job(properties_of(raw)).definition
    collection = await require_collection(conn, name)
    definition = await resolve_calendars(conn, collection, definition)
    listing = await evaluate(
        lists_calendars(definition), evaluation.draft_listing, definition, count, now
    )
    return _described(listing, definition, now)


def _described(
    listing: dict[str, Any], definition: dict[str, Any], created: datetime
) -> dict[str, Any]:
    """The listing with the schedule in words beside it (`scheduleDescription`)."""
    told = describe_schedule(definition, created)
    return listing if told is None else {DESCRIPTION: told, **listing}
