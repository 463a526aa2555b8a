"""Beyond Azure: the next executions of a job (stored, or a definition not saved yet), in UTC and
on the job's wall clock, with what daylight saving time and exclusion calendars do to them, and
the job's `executionPolicy`: a stored job's executions already due that no process has run yet
are marked `overdue`, with what its missed policy does with them (`ifMissed`)."""

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
from horarium.model.execution_policy import missed_runs, policy_of, render_policy
from horarium.model.job import parse_job, properties_of
from horarium.model.names import CollectionName, check_job_name
from horarium.model.schedule import compile_plan
from horarium.recurrence import Plan, Run, outline
from horarium.store.resources import jobs


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


# At most this many overdue executions are enumerated to find the latest one (a minute job
# down for two months); beyond it, the latest listed one is taken as the latest.
OVERDUE_SCAN = 100_000


def _overdue_fates(
    series: Plan, runs: list[Run], first_repeat: int, now: datetime, definition: dict[str, Any]
) -> list[bool]:
    """For the listed runs due before `now`: whether the job's missed policy runs each one,
    judged against every execution due by `now` (also those beyond the listing)."""
    listed = [r.instant for r in runs if r.instant is not None and r.instant < now]
    if not listed or not series.recurring:  # a one-time job runs however late
        return [True] * len(listed)
    overdue: list[datetime] = []
    ordinal = first_repeat
    for instant in series.iter_from(listed[0]):
        if instant >= now or (series.count is not None and ordinal > series.count):
            break
        overdue.append(instant)
        ordinal += 1
        if len(overdue) >= OVERDUE_SCAN:
            break
    fates = missed_runs(overdue, now, policy_of(definition))
    return fates[: len(listed)]


def _listing(
    series: Plan,
    start: datetime | None,
    first_repeat: int,
    count: int,
    definition: dict[str, Any],
    now: datetime | None = None,
    running: bool = False,
) -> dict[str, Any]:
    """The listing from `start`; `now`: a stored job's, whose executions before it are overdue
    (`running`: but the first is in flight, held by a process: it runs, it is not overdue)."""
    wanted = count
    if series.count is not None:
        wanted = max(0, min(count, series.count - first_repeat + 1))
    if start is None or not wanted:
        runs: list[Run] = []
    elif not series.recurring:
        runs = [Run(start, (start,), None)]
    else:
        runs = outline(series, start, wanted)
    skip = 1 if running and runs else 0
    fates: list[bool | None] = []
    if now is not None:
        found = _overdue_fates(series, runs[skip:], first_repeat + skip, now, definition)
        fates = [None] * skip + list(found) if found else []
    value: list[dict[str, Any]] = []
    repeat = first_repeat
    for run in runs:
        if run.instant is None:  # skipped by a calendar: it does not run, nor count
            value.append(
                {**_describe(series, run.scheduled[0], None), "skippedByCalendar": run.calendar}
            )
            continue
        entry = _describe(series, run.instant, repeat)
        fate = fates[repeat - first_repeat] if repeat - first_repeat < len(fates) else None
        if fate is not None:
            entry["overdue"] = True
            entry["ifMissed"] = "Runs" if fate else "Postponed"
        repeat += 1
        if run.calendar is not None:
            entry["movedByCalendar"] = run.calendar
            entry["scheduledExecutionTimes"] = [datetimes.format_instant(t) for t in run.scheduled]
        value.append(entry)
    listing: dict[str, Any] = {"value": value, "nextLink": None}
    if definition.get("executionPolicy") is not None:
        listing["executionPolicy"] = render_policy(definition["executionPolicy"])
    return listing


async def for_job(
    conn: AsyncConnection, name: CollectionName, job_name: str, count: int, now: datetime
) -> dict[str, Any]:
    """A stored job: from its next execution; a job not scheduled now (Disabled, or in a
    collection that is not Enabled): from where it would resume if enabled now."""
    collection = await require_collection(conn, name)
    job = await job_ops.require(conn, collection, job_name)
    series = compile_plan(job.definition, job.schedule_set_at)
    if job.state in FINAL_JOB_STATES:
        return _listing(series, None, job.next_repeat, count, job.definition)
    start = job.next_execution_at
    if start is None:
        start = series.at_or_after(now)
        if start is None and not series.recurring and job.next_repeat == 1:
            start = now
    running = job.next_execution_at is not None and await jobs.in_flight(conn, job.id, now)
    return _listing(series, start, job.next_repeat, count, job.definition, now, running)


async def for_definition(
    conn: AsyncConnection, name: CollectionName, job_name: str, raw: Any, count: int, now: datetime
) -> dict[str, Any]:
    """An unsaved definition, as if it were created now."""
    check_job_name(job_name)
    definition = parse_job(properties_of(raw)).definition
    collection = await require_collection(conn, name)
    definition = await resolve_calendars(conn, collection, definition)
    series = compile_plan(definition, now)
    return _listing(series, series.first, 1, count, definition)
