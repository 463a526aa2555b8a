"""The pure steps behind the API's answers about a job's runs, run in the offload pool when the
job lists exclusion calendars (`api/offload.py`): its upcoming listing, its next execution after
a calendar changes, the executions a backfill queues. This module imports the model and the
recurrence package only, so that a pool worker starts quickly."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from horarium.model import datetimes
from horarium.model.durations import format_timespan
from horarium.model.execution_policy import missed_runs, policy_of, render_policy
from horarium.model.schedule import compile_plan
from horarium.recurrence import Plan, Run, outline

MAX_BACKFILL = 1000  # executions one backfill queues, and pending per job


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


def run_entry(series: Plan, run: Run, repeat: int | None) -> dict[str, Any]:
    """One entry of an upcoming listing: an execution (`repeat`: its ordinal, or None when
    unknown) or one a calendar skips (no repeatCount), with what the calendars did to it."""
    if run.instant is None:
        return {**_describe(series, run.scheduled[0], None), "skippedByCalendar": run.calendar}
    entry = _describe(series, run.instant, repeat)
    if run.calendar is not None:
        entry["movedByCalendar"] = run.calendar
        entry["scheduledExecutionTimes"] = [datetimes.format_instant(t) for t in run.scheduled]
    return entry


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
        entry = run_entry(series, run, repeat)
        if run.instant is None:  # skipped by a calendar: it does not run, nor count
            value.append(entry)
            continue
        fate = fates[repeat - first_repeat] if repeat - first_repeat < len(fates) else None
        if fate is not None:
            entry["overdue"] = True
            entry["ifMissed"] = "Runs" if fate else "Postponed"
        repeat += 1
        value.append(entry)
    listing: dict[str, Any] = {"value": value, "nextLink": None}
    if definition.get("executionPolicy") is not None:
        listing["executionPolicy"] = render_policy(definition["executionPolicy"])
    return listing


def stored_listing(
    definition: dict[str, Any],
    schedule_set_at: datetime,
    due: datetime | None,
    next_repeat: int,
    count: int,
    now: datetime,
    *,
    final: bool,
    running: bool,
) -> dict[str, Any]:
    """A stored job's listing: from its due execution, or (not scheduled now) from where it
    would resume if enabled now; none for a final job."""
    series = compile_plan(definition, schedule_set_at)
    if final:
        return _listing(series, None, next_repeat, count, definition)
    start = due
    if start is None:
        start = series.at_or_after(now)
        if start is None and not series.recurring and next_repeat == 1:
            start = now
    return _listing(series, start, next_repeat, count, definition, now, running)


def draft_listing(definition: dict[str, Any], count: int, now: datetime) -> dict[str, Any]:
    """An unsaved definition's listing, as if it were created now."""
    series = compile_plan(definition, now)
    return _listing(series, series.first, 1, count, definition)


@dataclass(frozen=True)
class Next:
    """A job's next execution once its calendars changed."""

    changes: bool  # next_at replaces the job's next execution
    next_at: datetime | None
    ended: bool  # the series has no execution left (the job completes, unless one is asked)


def rescheduled(
    definition: dict[str, Any],
    schedule_set_at: datetime,
    due: datetime,
    leased: bool,
    done: int,
    now: datetime,
) -> Next:
    """A job's next execution under its calendars' new copies: the first run at or after now
    (or its due execution, when earlier), or, while a process runs the due one, the first run
    after that (kept as it is when there is none)."""
    series = compile_plan(definition, schedule_set_at)
    if leased:
        upcoming = series.after(due)
        if upcoming is not None and (series.count is None or done + 1 < series.count):
            return Next(True, upcoming, False)
        return Next(False, None, False)
    upcoming = series.at_or_after(min(now, due))
    if series.count is not None and done >= series.count:
        upcoming = None
    return Next(True, upcoming, upcoming is None)


def executions(
    definition: dict[str, Any], created: datetime, start: datetime, end: datetime
) -> list[datetime]:
    """`occurrences` of the job's series (its schedule set at `created`)."""
    return occurrences(compile_plan(definition, created), start, end)


def occurrences(series: Plan, start: datetime, end: datetime) -> list[datetime]:
    """The series' executions in [start, end), `recurrence.count` honoured; at most
    MAX_BACKFILL + 1 (one more tells the caller there are too many)."""
    found: list[datetime] = []
    count = series.count
    origin = series.first if count is not None else start
    if origin is None:
        return found
    for ordinal, instant in enumerate(series.iter_from(min(origin, start)), start=1):
        if instant >= end or (count is not None and ordinal > count):
            break
        if instant >= start:
            found.append(instant)
            if len(found) > MAX_BACKFILL:
                break
    return found


# -- check-in monitors: their expected instants are a job's series ---------------------------------


def first_expected(definition: dict[str, Any], created: datetime) -> datetime | None:
    """The first instant a check-in is expected by a monitor whose schedule is set at
    `created`: its series' first instant after `created` (a job without startTime also runs at
    `created` itself; a monitor made then expects no check-in yet)."""
    return compile_plan(definition, created).after(created)


def expected_after(
    definition: dict[str, Any], schedule_set_at: datetime, at: datetime
) -> datetime | None:
    """The first expected instant after a check-in at `at` (None: the series has ended)."""
    return compile_plan(definition, schedule_set_at).after(at)


def expected_from(
    definition: dict[str, Any], schedule_set_at: datetime, at: datetime
) -> datetime | None:
    """The first expected instant at or after `at` (None: the series has ended)."""
    return compile_plan(definition, schedule_set_at).at_or_after(at)


def monitor_listing(
    definition: dict[str, Any], schedule_set_at: datetime, start: datetime | None, count: int
) -> dict[str, Any]:
    """A monitor's next expected check-ins from `start`, listed as a job's upcoming runs."""
    return _listing(compile_plan(definition, schedule_set_at), start, 1, count, definition)
