"""Job operations, each inside the caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api.calendar_ops import resolve as resolve_calendars
from horarium.api.collection_ops import require as require_collection
from horarium.api.offload import evaluate
from horarium.api.resuming import resumed_state
from horarium.model import enums, quota
from horarium.model.actions import WireStyle, uses_authentication
from horarium.model.enums import CollectionState, JobState
from horarium.model.errors import BadRequest, Conflict, NotFound
from horarium.model.job import (
    JobInput,
    JobStatus,
    parse_job,
    properties_of,
    render_job,
    stored_properties,
)
from horarium.model.kept_secrets import keep_stored, refuse_masks
from horarium.model.merge import merge_patch
from horarium.model.names import CollectionName, check_job_name
from horarium.model.pause import PAUSE, begun, require_disabled
from horarium.model.schedule import check_schedule, checked_timing, lists_calendars
from horarium.model.secrets import masked
from horarium.store.resources import jobs, run_requests
from horarium.store.resources.collections import CollectionRecord
from horarium.store.resources.jobs import JobRecord


def render(collection: CollectionRecord, job: JobRecord, style: WireStyle) -> dict[str, Any]:
    return render_job(
        arm_id=f"{collection.names.arm_id}/jobs/{job.name}",
        collection=collection.name,
        name=job.name,
        definition=job.definition,
        state=job.state,
        status=JobStatus(
            execution_count=job.execution_count,
            failure_count=job.failure_count,
            faulted_count=job.faulted_count,
            last_execution_at=job.last_execution_at,
            next_execution_at=job.next_execution_at,
        ),
        style=style,
        schedule_set_at=job.schedule_set_at if style.described else None,
    )


async def require(conn: AsyncConnection, collection: CollectionRecord, name: str) -> JobRecord:
    """The job, or 404; a name no job can have (a NUL, say) is 400, before any query."""
    check_job_name(name)
    found = await jobs.get(conn, collection.id, name)
    if found is None:
        raise NotFound(
            f"The Resource 'Microsoft.Scheduler/jobCollections/{collection.name}/jobs/{name}'"
            f" under resource group '{collection.resource_group}' was not found."
        )
    return found


def _final_state_conflict(job: JobRecord, wanted: str) -> Conflict:
    return Conflict(
        f"properties.state: job '{job.name}' is {job.state}; the state of a Completed or"
        f" Faulted job cannot be changed (to {wanted}). It can still be deleted.",
        code="JobStateConflict",
    )


def _check_limits(collection: CollectionRecord, job: JobInput) -> None:
    limit = quota.limits(collection.sku, collection.document.get("quota"))
    quota.check_features(limit, uses_authentication(job.definition["action"]))
    quota.check_recurrence(limit, job.definition, collection.name)


def _with_kept_secrets(properties: dict[str, Any], existing: JobRecord | None) -> JobInput:
    """The job a PUT or PATCH asks for, each secret it leaves out (or sends back masked) kept
    from the stored job while its target is unchanged (`model.kept_secrets`)."""
    if existing is not None:
        properties, kept = keep_stored(properties, existing.definition)
        if kept and existing.unreadable:
            raise Conflict(
                f"{kept[0]}: the stored secret cannot be kept, because this server cannot read"
                f" it ({existing.unreadable}); send the job's secrets again",
                code="SecretsUnreadable",
            )
    wanted = parse_job(properties)
    refuse_masks(wanted.definition)
    return wanted


def _settable(state: str) -> None:
    if state not in enums.SETTABLE_JOB_STATES:
        raise BadRequest(
            f"properties.state: {state} cannot be set; only Enabled or Disabled"
            " (the service sets Completed and Faulted)"
        )


def _paused(wanted: JobInput, state: str, existing: JobRecord | None, now: datetime) -> None:
    """A pause is for a Disabled job; it keeps the time it began while it is only changed."""
    pause = wanted.definition.get(PAUSE)
    require_disabled(pause, state, "properties.pause", "job")
    if pause is not None:
        before = existing.definition.get(PAUSE) if existing is not None else None
        wanted.definition[PAUSE] = begun(pause, before, now)


async def put(
    conn: AsyncConnection,
    name: CollectionName,
    job_name: str,
    raw: Any,
    style: WireStyle,
    now: datetime,
) -> tuple[int, dict[str, Any]]:
    """Create (201) or replace (200) a job. Replacing starts a new series (ordinal 1) from now;
    the status counters and history are kept."""
    check_job_name(job_name)
    properties = properties_of(raw)
    collection = await require_collection(conn, name, lock=True)
    existing = await jobs.get(conn, collection.id, job_name)
    wanted = _with_kept_secrets(properties, existing)
    wanted = JobInput(await resolve_calendars(conn, collection, wanted.definition), wanted.state)
    state = wanted.state or JobState.ENABLED
    if existing is not None and existing.state in enums.FINAL_JOB_STATES:
        if state != existing.state:
            raise _final_state_conflict(existing, state)
    else:
        _settable(state)
    _paused(wanted, state, existing, now)
    result = await evaluate(
        lists_calendars(wanted.definition),
        checked_timing,
        wanted.definition,
        state=state,
        schedule_set_at=now,
        now=now,
        executions_done=0,
        collection_enabled=collection.state == CollectionState.ENABLED,
        fresh=True,
    )
    _check_limits(collection, wanted)
    if existing is None:
        limit = quota.limits(collection.sku, collection.document.get("quota"))
        quota.check_job_count(limit, await jobs.count(conn, collection.id) + 1, collection.name)
    if existing is None:
        await jobs.insert_one(
            conn,
            collection_id=collection.id,
            name=job_name,
            definition=wanted.definition,
            state=result.state,
            next_execution_at=result.next_execution_at,
            now=now,
        )
        status = 201
    else:
        values: dict[str, Any] = {
            "definition": wanted.definition,
            "schedule_set_at": now,
            "next_execution_at": result.next_execution_at,
            "next_repeat": 1,
        }
        if result.state != existing.state:
            values["state"] = result.state
        await jobs.update_one(conn, existing.id, now, **values)
        status = 200
    return status, render(collection, await require(conn, collection, job_name), style)


async def patch(
    conn: AsyncConnection,
    name: CollectionName,
    job_name: str,
    raw: Any,
    style: WireStyle,
    now: datetime,
) -> dict[str, Any]:
    """Deep-merge the body onto the job. A changed startTime / recurrence starts the schedule
    again from now (the series' ordinal carries on); enabling resumes at the first execution
    at or after now."""
    changes = properties_of(raw)
    collection = await require_collection(conn, name, lock=True)
    existing = await require(conn, collection, job_name)
    base = stored_properties(masked(existing.definition), existing.state)
    if PAUSE not in changes and enums.find(changes.get("state"), enums.JOB_STATES) == "Enabled":
        base.pop(PAUSE, None)  # enabling a paused job ends its pause
    wanted = _with_kept_secrets(merge_patch(base, changes), existing)
    wanted = JobInput(await resolve_calendars(conn, collection, wanted.definition), wanted.state)
    state = wanted.state or existing.state
    if existing.state in enums.FINAL_JOB_STATES:
        if state != existing.state:
            raise _final_state_conflict(existing, state)
    else:
        _settable(state)
    _paused(wanted, state, existing, now)
    old, new = existing.definition, wanted.definition
    rescheduled = any(old.get(k) != new.get(k) for k in ("startTime", "recurrence"))
    schedule_set_at = now if rescheduled else existing.schedule_set_at
    result = None  # the engine's next execution stands
    if state == JobState.ENABLED and existing.state == JobState.ENABLED and not rescheduled:
        await evaluate(lists_calendars(new), check_schedule, new, schedule_set_at)
    else:
        result = await evaluate(
            lists_calendars(new),
            checked_timing,
            new,
            state=state,
            schedule_set_at=schedule_set_at,
            now=now,
            executions_done=existing.next_repeat - 1,
            collection_enabled=collection.state == CollectionState.ENABLED,
            fresh=rescheduled,
        )
    _check_limits(collection, wanted)
    values: dict[str, Any] = {"definition": new}
    if rescheduled:
        values["schedule_set_at"] = now
    if result is not None:
        state = result.state if rescheduled else await resumed_state(conn, existing, result)
        values["next_execution_at"] = result.next_execution_at
    if state != existing.state:
        values["state"] = state
    await jobs.update_one(conn, existing.id, now, **values)
    return render(collection, await require(conn, collection, job_name), style)


async def get(
    conn: AsyncConnection, name: CollectionName, job_name: str, style: WireStyle
) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    return render(collection, await require(conn, collection, job_name), style)


async def list_page(
    conn: AsyncConnection,
    name: CollectionName,
    *,
    state: str | None,
    limit: int,
    offset: int,
    style: WireStyle,
) -> tuple[list[dict[str, Any]], bool]:
    """One page of jobs by name, and whether another page follows."""
    collection = await require_collection(conn, name)
    found = await jobs.page(conn, collection.id, state=state, limit=limit + 1, offset=offset)
    return [render(collection, job, style) for job in found[:limit]], len(found) > limit


async def delete(conn: AsyncConnection, name: CollectionName, job_name: str) -> None:
    collection = await require_collection(conn, name, lock=True)
    job = await require(conn, collection, job_name)
    await jobs.delete_one(conn, job.id)


async def run(conn: AsyncConnection, name: CollectionName, job_name: str, now: datetime) -> None:
    """POST …/run: one execution now, outside the job's series. Not for a Disabled job (its
    owner stopped it) nor a job of a collection that is not Enabled (it runs nothing), and at
    most one request per job waiting to start (409 otherwise); Completed and Faulted jobs may
    be run (the run does not change their state)."""
    collection = await require_collection(conn, name, lock=True)
    job = await require(conn, collection, job_name)
    if collection.state != CollectionState.ENABLED:
        raise Conflict(
            f"Job collection '{collection.name}' is {collection.state}, so none of its jobs"
            " runs, nor can be run now; enable the collection first (POST …/enable).",
            code="JobCollectionStateConflict",
        )
    if job.state == JobState.DISABLED:
        raise Conflict(
            f"Job '{job.name}' is Disabled, so it cannot be run now; enable it first"
            " (PATCH properties.state to Enabled).",
            code="JobStateConflict",
        )
    if await run_requests.run_pending(conn, job.id):
        raise Conflict(
            f"Job '{job.name}' already has a run-now request that has not started yet; a job"
            " may have one waiting at a time. Try again once it has started.",
            code="JobRunAlreadyPending",
        )
    await run_requests.request_run(conn, job.id, now)
