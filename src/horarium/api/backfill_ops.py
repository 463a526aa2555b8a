"""Beyond Azure: `POST …/jobs/{job}/backfill` runs a job's executions whose times fall in
[from, to) — past ones, typically — each with its own expected time and the execution tag of
its occurrence, queued as `job_executions` rows of kind `backfill` (`docs/engine.md`). One call
queues at most MAX_BACKFILL, and a job has at most MAX_BACKFILL not finished (409)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import evaluation
from horarium.api.collection_ops import require as require_collection
from horarium.api.evaluation import MAX_BACKFILL
from horarium.api.job_ops import require
from horarium.api.offload import evaluate
from horarium.model import datetimes
from horarium.model.enums import CollectionState, JobState
from horarium.model.errors import BadRequest, Conflict
from horarium.model.fields import obj
from horarium.model.names import CollectionName
from horarium.model.schedule import lists_calendars
from horarium.store.resources import run_requests


def _instant(body: dict[str, Any], name: str) -> datetime:
    value = body.get(name)
    if value is None:
        raise BadRequest(f"{name}: required")
    parsed = datetimes.parse(value, name)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _pattern_from(
    definition: dict[str, Any], schedule_set_at: datetime, start: datetime
) -> datetime:
    """The *created* the range is read with: a job with a `startTime` has executions from it,
    also before its schedule was set (the range may reach back before the job existed); one
    without is anchored at its *created* and has none before."""
    if definition.get("startTime") is None:
        return schedule_set_at
    return min(schedule_set_at, start)


async def backfill(
    conn: AsyncConnection, name: CollectionName, job_name: str, raw: Any, now: datetime
) -> dict[str, Any]:
    """Queue the job's executions in [from, to); the answer says how many."""
    body = obj(raw, "body")
    start, end = _instant(body, "from"), _instant(body, "to")
    if start >= end:
        raise BadRequest("to: must be later than from")
    collection = await require_collection(conn, name, lock=True)
    job = await require(conn, collection, job_name)
    if collection.state != CollectionState.ENABLED:
        raise Conflict(
            f"Job collection '{collection.name}' is {collection.state}, so none of its jobs"
            " runs; enable the collection first (POST …/enable).",
            code="JobCollectionStateConflict",
        )
    if job.state == JobState.DISABLED:
        raise Conflict(
            f"Job '{job.name}' is Disabled, so it cannot be backfilled; enable it first"
            " (PATCH properties.state to Enabled).",
            code="JobStateConflict",
        )
    pattern = _pattern_from(job.definition, job.schedule_set_at, start)
    found = await evaluate(
        lists_calendars(job.definition), evaluation.executions, job.definition, pattern, start, end
    )
    if len(found) > MAX_BACKFILL:
        raise BadRequest(
            f"from, to: more than {MAX_BACKFILL} executions of the job fall in"
            f" [{datetimes.format_instant(start)}, {datetimes.format_instant(end)});"
            f" a backfill runs at most {MAX_BACKFILL}: ask for a shorter range",
            code="BackfillTooLarge",
        )
    pending = await run_requests.backfills_pending(conn, job.id)
    if pending + len(found) > MAX_BACKFILL:
        raise Conflict(
            f"Job '{job.name}' has {pending} backfill executions that have not finished; with"
            f" the {len(found)} asked for it would have more than {MAX_BACKFILL}, the most one"
            " job may have pending: wait for them to run, or ask for a shorter range.",
            code="BackfillPendingLimit",
        )
    await run_requests.request_backfill(conn, job.id, job.version, job.schedule_set_at, found, now)
    return {
        "from": datetimes.format_instant(start),
        "to": datetimes.format_instant(end),
        "queued": len(found),
    }
