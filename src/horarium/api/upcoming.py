"""Beyond Azure: the next executions of a job (stored, or a definition not saved yet), in UTC and
on the job's wall clock, with what daylight saving time and exclusion calendars do to them."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import job_ops
from horarium.api.calendar_ops import resolve as resolve_calendars
from horarium.api.collection_ops import require as require_collection
from horarium.model import datetimes
from horarium.model.durations import format_timespan
from horarium.model.enums import FINAL_JOB_STATES
from horarium.model.job import parse_job, properties_of
from horarium.model.names import CollectionName, check_job_name
from horarium.model.schedule import compile_plan
from horarium.recurrence import Plan, Run, outline


def _describe(series: Plan, instant: datetime, repeat: int | None) -> dict[str, Any]:
    seen = series.describe(instant)
    dst = seen.local.dst()
    return {
        "executionTime": datetimes.format_instant(seen.instant),
        "localTime": seen.local.isoformat(),
        "timeZone": series.zone.key,
        "utcOffset": _offset(seen.local),
        "daylightSavingTime": bool(dst),
        # The wall-clock time the schedule asked for; differs from localTime when it did not
        # exist (spring forward) and the execution moved.
        "scheduledLocalTime": seen.wall.isoformat(),
        "movedBySpringForward": seen.moved,
        "mergedByFallBack": seen.merged,
        # With recurrence.jitter: the instant the schedule named, and how much later it starts.
        "scheduledExecutionTime": datetimes.format_instant(seen.nominal or seen.instant),
        "jitterOffset": format_timespan(seen.jitter),
        "repeatCount": repeat,
    }


def _offset(local: datetime) -> str:
    minutes = int((local.utcoffset() or timedelta(0)).total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def _listing(series: Plan, start: datetime | None, first_repeat: int, count: int) -> dict[str, Any]:
    wanted = count
    if series.count is not None:
        wanted = max(0, min(count, series.count - first_repeat + 1))
    if start is None or not wanted:
        runs: list[Run] = []
    elif not series.recurring:
        runs = [Run(start, (start,), None)]
    else:
        runs = outline(series, start, wanted)
    value: list[dict[str, Any]] = []
    repeat = first_repeat
    for run in runs:
        if run.instant is None:  # skipped by a calendar: it does not run, nor count
            value.append(
                {**_describe(series, run.scheduled[0], None), "skippedByCalendar": run.calendar}
            )
            continue
        entry = _describe(series, run.instant, repeat)
        repeat += 1
        if run.calendar is not None:
            entry["movedByCalendar"] = run.calendar
            entry["scheduledExecutionTimes"] = [datetimes.format_instant(t) for t in run.scheduled]
        value.append(entry)
    return {"value": value, "nextLink": None}


async def for_job(
    conn: AsyncConnection, name: CollectionName, job_name: str, count: int, now: datetime
) -> dict[str, Any]:
    """A stored job: from its next execution; a job not scheduled now (Disabled, or in a
    collection that is not Enabled): from where it would resume if enabled now."""
    collection = await require_collection(conn, name)
    job = await job_ops.require(conn, collection, job_name)
    series = compile_plan(job.definition, job.schedule_set_at)
    if job.state in FINAL_JOB_STATES:
        return {"value": [], "nextLink": None}
    start = job.next_execution_at
    if start is None:
        start = series.at_or_after(now)
        if start is None and not series.recurring and job.next_repeat == 1:
            start = now
    return _listing(series, start, job.next_repeat, count)


async def for_definition(
    conn: AsyncConnection, name: CollectionName, job_name: str, raw: Any, count: int, now: datetime
) -> dict[str, Any]:
    """An unsaved definition, as if it were created now."""
    check_job_name(job_name)
    definition = parse_job(properties_of(raw)).definition
    collection = await require_collection(conn, name)
    definition = await resolve_calendars(conn, collection, definition)
    series = compile_plan(definition, now)
    return _listing(series, series.first, 1, count)
