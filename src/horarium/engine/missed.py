"""Missed executions under a job's `executionPolicy.missed` (pure): `RunLatest` (the default,
`schedule.advance`), `RunAll` (every missed execution inside the catch-up window runs, oldest
first, one at a time: the job's series points at the next one, already due), `Skip` (none runs).
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta

from horarium.engine.schedule import Advance, JobSeries, SeriesRun, advance, is_missed
from horarium.model.execution_policy import MISSED_RUN_ALL, MISSED_SKIP, ExecutionPolicy


def advance_by_policy(
    series: JobSeries,
    due: datetime,
    repeat: int,
    now: datetime,
    grace: timedelta,
    postponed_cap: int,
    policy: ExecutionPolicy,
) -> Advance:
    """`schedule.advance` under `policy.missed`."""
    if not series.recurring or not is_missed(due, now, grace):
        return advance(series, due, repeat, now, grace, postponed_cap)
    if policy.missed == MISSED_RUN_ALL:
        return catch_up(series, due, repeat, now, postponed_cap, now - policy.catch_up_window)
    step = advance(series, due, repeat, now, grace, postponed_cap)
    if policy.missed == MISSED_SKIP:
        return _run_none(step, postponed_cap)
    return step


def catch_up(
    series: JobSeries,
    due: datetime,
    repeat: int,
    now: datetime,
    postponed_cap: int,
    start: datetime,
) -> Advance:
    """RunAll: the oldest execution due by `now` at or after `start` runs (those before `start`
    are Postponed); the series then points at the one after it, due already if it was missed
    too. Nothing inside the window: every missed one is Postponed and none runs."""
    if due >= start:
        return advance(series, due, repeat, now, timedelta.max, postponed_cap)
    count = series.count
    window: deque[SeriesRun] = deque(maxlen=postponed_cap)
    seen = 0
    ordinal = repeat
    next_at: datetime | None = None
    for instant in series.iter_from(due):
        if count is not None and ordinal > count:
            break
        if instant > now:
            next_at = instant
            break
        if instant >= start:
            step = advance(series, instant, ordinal, now, timedelta.max, postponed_cap)
            step.postponed = list(window)
            step.postponed_unrecorded = seen - len(window)
            return step
        window.append(SeriesRun(instant, ordinal))
        seen += 1
        ordinal += 1
    return Advance(
        run=window[-1],
        last=next_at is None,
        next_at=next_at,
        next_repeat=ordinal,
        postponed=list(window),
        postponed_unrecorded=seen - len(window),
        runs=False,
    )


def _run_none(step: Advance, postponed_cap: int) -> Advance:
    """Skip: the execution advance would run is Postponed with the others."""
    missed = [*step.postponed, step.run]
    kept = missed[-postponed_cap:]
    step.postponed = kept
    step.postponed_unrecorded += len(missed) - len(kept)
    step.runs = False
    return step
