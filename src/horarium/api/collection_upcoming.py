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
from horarium.api.windows import Hold, JobTiming, check_window, window
from horarium.model import datetimes
from horarium.model.enums import FINAL_JOB_STATES, CollectionState
from horarium.model.errors import BadRequest
from horarium.model.names import CollectionName
from horarium.model.pause import PAUSE, until_of
from horarium.model.schedule import lists_calendars
from horarium.recurrence import RESOLVED, RecurrenceError, parse_instant
from horarium.store.resources import jobs

DEFAULT_WINDOW = timedelta(hours=24)
INLINE_JOBS = 20  # more jobs than this (or any listing calendars): computed in the pool
TIMING_KEYS = ("startTime", "recurrence", RESOLVED)  # what the window reads of a definition


def read_window(start: str | None, end: str | None, now: datetime) -> tuple[datetime, datetime]:
    """`from` (default now) and `to` (default 24 hours after `from`): ISO 8601, UTC when
    without an offset; 400 naming the field otherwise."""
    first = _instant(start, "from") if start is not None else now
    last = _instant(end, "to") if end is not None else first + DEFAULT_WINDOW
    check_window(first, last)
    return first, last


def _instant(value: str, field: str) -> datetime:
    try:
        return parse_instant(value)
    except RecurrenceError as e:
        raise BadRequest(f"{field}: {e.rule}") from None


async def for_collection(
    conn: AsyncConnection, name: CollectionName, start: datetime, end: datetime, now: datetime
) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    found = await jobs.all_of(conn, collection.id)
    timings = [
        JobTiming(
            name=job.name,
            definition={k: job.definition[k] for k in TIMING_KEYS if k in job.definition},
            state=job.state,
            schedule_set_at=job.schedule_set_at,
            due=job.next_execution_at,
            next_repeat=job.next_repeat,
            final=job.state in FINAL_JOB_STATES,
            paused_until=until_of(job.definition.get(PAUSE)),
        )
        for job in found
    ]
    hold = None
    if collection.state != CollectionState.ENABLED:
        hold = Hold("collection", collection.state, until_of(collection.document.get(PAUSE)))
    costly = len(timings) > INLINE_JOBS or any(lists_calendars(t.definition) for t in timings)
    value = await evaluate(costly, window, timings, hold, start, end, now)
    return {
        "from": datetimes.format_instant(start),
        "to": datetimes.format_instant(end),
        "collectionState": collection.state,
        "value": value,
        "nextLink": None,
    }
