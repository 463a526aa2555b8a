"""`GET …/jobCollections/{jc}/upcoming?from&to` (a Horarium extension): the executions of every
job of a collection in one window (at most `windows.MAX_WINDOW` long, `windows.MAX_EXECUTIONS`
entries), computed in one request, as the dashboard's timeline and `horarium collections
upcoming` show them. The per-job listing is `api/upcoming.py`; the pure step `api/windows.py`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api.collection_ops import require as require_collection
from horarium.api.offload import evaluate
from horarium.api.windows import MAX_WINDOW, Hold, JobTiming, check_window, window
from horarium.model import datetimes
from horarium.model.enums import FINAL_JOB_STATES, CollectionState
from horarium.model.errors import BadRequest
from horarium.model.names import CollectionName
from horarium.model.pause import PAUSE, until_of
from horarium.model.schedule import lists_calendars
from horarium.recurrence import RESOLVED, RecurrenceError, parse_instant
from horarium.store.resources import jobs
from horarium.store.resources.collections import CollectionRecord
from horarium.store.resources.jobs import JobRecord

DEFAULT_WINDOW = timedelta(hours=24)
INLINE_JOBS = 20  # more jobs than this (or any listing calendars): computed in the pool
TIMING_KEYS = ("startTime", "recurrence", RESOLVED)  # what the window reads of a definition


def read_window(
    start: str | None,
    end: str | None,
    now: datetime,
    default: timedelta = DEFAULT_WINDOW,
    longest: timedelta = MAX_WINDOW,
) -> tuple[datetime, datetime]:
    """`from` (default now) and `to` (default `default` after `from`, at most `longest`
    after it): ISO 8601, UTC when without an offset; 400 naming the field otherwise."""
    first = _instant(start, "from") if start is not None else now
    last = _instant(end, "to") if end is not None else first + default
    check_window(first, last, longest)
    return first, last


def _instant(value: str, field: str) -> datetime:
    try:
        return parse_instant(value)
    except RecurrenceError as e:
        raise BadRequest(f"{field}: {e.rule}") from None


def job_timing(job: JobRecord, definition: dict[str, Any] | None = None) -> JobTiming:
    """What the window reads of `job`: its timing keys (or `definition`, such keys of another
    version of it), state, due execution and pause."""
    if definition is None:
        definition = {k: job.definition[k] for k in TIMING_KEYS if k in job.definition}
    return JobTiming(
        name=job.name,
        definition=definition,
        state=job.state,
        schedule_set_at=job.schedule_set_at,
        due=job.next_execution_at,
        next_repeat=job.next_repeat,
        final=job.state in FINAL_JOB_STATES,
        paused_until=until_of(job.definition.get(PAUSE)),
    )


def collection_hold(collection: CollectionRecord) -> Hold | None:
    """What holds every job of a Disabled or paused collection, else None."""
    if collection.state == CollectionState.ENABLED:
        return None
    return Hold("collection", collection.state, until_of(collection.document.get(PAUSE)))


async def for_collection(
    conn: AsyncConnection, name: CollectionName, start: datetime, end: datetime, now: datetime
) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    found = await jobs.all_of(conn, collection.id)
    timings = [job_timing(job) for job in found]
    hold = collection_hold(collection)
    costly = len(timings) > INLINE_JOBS or any(lists_calendars(t.definition) for t in timings)
    value = await evaluate(costly, window, timings, hold, start, end, now)
    return {
        "from": datetimes.format_instant(start),
        "to": datetimes.format_instant(end),
        "collectionState": collection.state,
        "value": value,
        "nextLink": None,
    }
