"""The pure step behind `GET …/jobCollections/{jc}/upcoming?from&to` (a Horarium extension):
the executions of every job of a collection in one window, each entry as the per-job
`upcoming` writes it (`evaluation.run_entry`), with what pauses do to it. Run in the offload pool
when it may be costly (`api/offload.py`); imports the model and the recurrence package only."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from horarium.api.evaluation import run_entry
from horarium.model import datetimes
from horarium.model.errors import ApiError, BadRequest
from horarium.model.job import describe_schedule
from horarium.model.schedule import compile_plan
from horarium.recurrence import Plan, RecurrenceError, Run, outline

MAX_WINDOW = timedelta(days=7)  # `to` − `from`
MAX_EXECUTIONS = 20_000  # entries (executions and calendar-skipped ones) of one answer, all jobs
CHUNK = 64  # runs asked of the series at a time


class TooMany(Exception):
    """The window holds more than MAX_EXECUTIONS entries."""


@dataclass(frozen=True)
class JobTiming:
    """What the window needs of a stored job (pickled into the offload pool)."""

    name: str
    definition: dict[str, Any]  # startTime, recurrence, resolvedCalendars
    state: str
    schedule_set_at: datetime
    due: datetime | None  # next_execution_at
    next_repeat: int
    final: bool  # Completed or Faulted
    paused_until: datetime | None  # the job's own pause (a Disabled job enabled again then)


@dataclass(frozen=True)
class Hold:
    """Why a job's executions do not run now: its own state, or its collection's."""

    by: str  # "job" or "collection"
    state: str
    until: datetime | None  # a pause's end: executions from then on run


def window(
    timings: list[JobTiming],
    collection_hold: Hold | None,
    start: datetime,
    end: datetime,
    now: datetime,
) -> list[dict[str, Any]]:
    """Each job's entry of the answer, in the order given; 400 (naming MAX_EXECUTIONS) when
    the window holds more entries than that."""
    left = MAX_EXECUTIONS
    out: list[dict[str, Any]] = []
    for timing in timings:
        try:
            entry, found = _job(timing, collection_hold, start, end, now, left)
        except TooMany:
            raise too_many(len(timings)) from None
        left -= found
        out.append(entry)
    return out


def _job(
    timing: JobTiming,
    collection_hold: Hold | None,
    start: datetime,
    end: datetime,
    now: datetime,
    left: int,
) -> tuple[dict[str, Any], int]:
    hold = _hold_of(timing, collection_hold)
    entry: dict[str, Any] = {"name": timing.name, "state": timing.state}
    described = describe_schedule(timing.definition, timing.schedule_set_at)
    if described is not None:
        entry["scheduleDescription"] = described
    if hold is not None:
        entry["heldBy"] = {
            "by": hold.by,
            "state": hold.state,
            "until": None if hold.until is None else datetimes.format_instant(hold.until),
        }
    executions: list[dict[str, Any]] = []
    entry["executions"] = executions
    try:
        series = compile_plan(timing.definition, timing.schedule_set_at)
        entry["timeZone"] = series.zone.key
        if timing.final:
            return entry, 0
        for run, repeat in _runs(series, timing, start, end, now, left):
            item = run_entry(series, run, repeat)
            if hold is not None and run.instant is not None and _held(hold, run.instant):
                item["paused"] = True
            if item["scheduledExecutionTime"] != item["executionTime"]:
                item["jittered"] = True
            executions.append(item)
    except (ApiError, RecurrenceError) as e:  # one job's schedule does not fail the answer
        entry["error"] = str(e) if isinstance(e, RecurrenceError) else e.message
    return entry, len(executions)


def _hold_of(timing: JobTiming, collection_hold: Hold | None) -> Hold | None:
    """A collection that is not Enabled holds every job (disabling it disabled them; enabling
    it enables them again); else a job that is not Enabled holds itself."""
    if timing.final:
        return None
    if collection_hold is not None:
        return collection_hold
    if timing.state != "Enabled":
        return Hold("job", timing.state, timing.paused_until)
    return None


def _held(hold: Hold, instant: datetime) -> bool:
    return hold.until is None or instant < hold.until


def _runs(
    series: Plan, timing: JobTiming, start: datetime, end: datetime, now: datetime, left: int
) -> list[tuple[Run, int | None]]:
    """The job's runs (and calendar-skipped executions) in [start, end), never before its
    first execution, each with its ordinal when known (counted from the job's due execution,
    or, not scheduled now, from where it resumes). A series with `count` is walked from that
    execution, so that its end is known; then nothing before it is listed."""
    origin = timing.due
    if origin is None:
        origin = series.at_or_after(now)
        if origin is None and not series.recurring and timing.next_repeat == 1:
            origin = now  # a one-time job that never ran runs at once when enabled
    if origin is None:
        return []
    if not series.recurring:
        listed = start <= origin < end
        return [(Run(origin, (origin,), None), timing.next_repeat)] if listed else []
    walk_from = origin if series.count is not None else start
    repeat: int | None = timing.next_repeat if walk_from == origin else None
    found: list[tuple[Run, int | None]] = []
    walked = 0
    at = walk_from
    while True:
        batch = outline(series, at, CHUNK)
        if not batch:
            return found
        for run in batch:
            moment = run.instant or run.scheduled[0]
            if moment >= end:
                return found
            if run.instant is not None:
                if series.count is not None and repeat is not None and repeat > series.count:
                    return found
            if moment >= start:
                found.append((run, repeat if run.instant is not None else None))
                if len(found) > left:
                    raise TooMany
            walked += 1
            if walked > MAX_EXECUTIONS:  # a count-limited series walked from far back
                raise TooMany
            if run.instant is not None and repeat is not None:
                repeat += 1
        last = batch[-1]
        at = (last.instant or last.scheduled[-1]) + timedelta(microseconds=1)


def check_window(start: datetime, end: datetime, longest: timedelta = MAX_WINDOW) -> None:
    """400 naming the field when the window is empty or longer than `longest`."""
    if end <= start:
        raise BadRequest(f"to: {_text(end)} is not after from ({_text(start)})")
    if end - start > longest:
        raise BadRequest(
            f"to: the window from {_text(start)} to {_text(end)} is longer than"
            f" {longest.days} days, the most one request lists"
        )


def too_many(jobs: int) -> BadRequest:
    return BadRequest(
        f"from, to: the window holds more than {MAX_EXECUTIONS} executions across the"
        f" collection's {jobs} jobs, the most one request lists; choose a shorter window"
    )


def _text(instant: datetime) -> str:
    return datetimes.format_instant(instant)
