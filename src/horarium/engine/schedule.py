"""Advancing a job's series past a due execution, including executions missed while down.

Pure logic over a compiled recurrence plan. An execution found more than the grace period late
is *missed*: missed executions are not replayed in a burst; the latest one due runs once and
every earlier one is recorded as Postponed. For a huge gap (a minute job down for a month) only
the newest `postponed_cap` of them are recorded, the number left out is reported.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol


class JobSeries(Protocol):
    """A job's series of executions, as the engine reads it from `horarium.recurrence.Plan`."""

    @property
    def count(self) -> int | None: ...

    @property
    def recurring(self) -> bool: ...

    def after(self, instant: datetime) -> datetime | None: ...

    def iter_from(self, instant: datetime) -> Iterator[datetime]: ...


@dataclass(frozen=True)
class SeriesRun:
    """One execution of a job's series: when it is expected, and its ordinal."""

    expected: datetime
    repeat: int  # ordinal in the series, 1-based: history's repeatCount


@dataclass(slots=True)
class Advance:
    run: SeriesRun  # the execution to run now
    last: bool  # it ends the series: nothing comes after it
    next_at: datetime | None  # the job's next execution after `run`
    next_repeat: int
    postponed: list[SeriesRun] = field(default_factory=list)  # missed, oldest first
    postponed_unrecorded: int = 0  # missed ones beyond the cap, not written to history
    runs: bool = True  # False: `run` is not run either (it is the last of `postponed`)


def is_missed(due: datetime, now: datetime, grace: timedelta) -> bool:
    return now - due > grace


def advance(
    series: JobSeries,
    due: datetime,
    repeat: int,
    now: datetime,
    grace: timedelta,
    postponed_cap: int,
) -> Advance:
    """The job's execution at `due` (ordinal `repeat`) is due at `now`: what runs, what comes
    next, and which executions were missed."""
    count = series.count
    run = SeriesRun(due, repeat)
    postponed: list[SeriesRun] = []
    unrecorded = 0
    if is_missed(due, now, grace) and series.recurring:
        # Every execution due by now, oldest first; keep only the newest cap + 1.
        window: deque[SeriesRun] = deque(maxlen=postponed_cap + 1)
        seen = 0
        ordinal = repeat
        for instant in series.iter_from(due):
            if instant > now or (count is not None and ordinal > count):
                break
            window.append(SeriesRun(instant, ordinal))
            seen += 1
            ordinal += 1
        if window:
            run = window.pop()
            postponed = list(window)
            unrecorded = seen - 1 - len(postponed)
    next_repeat = run.repeat + 1
    next_at = series.after(run.expected) if series.recurring else None
    if count is not None and next_repeat > count:
        next_at = None
    return Advance(
        run=run,
        last=next_at is None,
        next_at=next_at,
        next_repeat=next_repeat,
        postponed=postponed,
        postponed_unrecorded=unrecorded,
    )
