"""A job's series less what its exclusion calendars take away (docs/recurrence.md, §8).

`recurrence.excludeCalendars` names calendars; each of the schedule's executions that one of
them excludes (in the job's zone) is skipped, or moved to the same wall-clock time on the nearest
later (`NextBusinessDay`) or earlier (`PreviousBusinessDay`) day where no listed calendar
excludes that time (`recurrence.onExcluded`). Executions that land on one instant run once.

The calendars' properties travel with the job: the API resolves the names into the stored
definition's internal `resolvedCalendars` property, so that `plan(definition, created=...)`
needs nothing else; `preview(..., calendars=...)` takes them by name.

The series is computed day by day: the runs that land on a local day come from the schedule's
executions on that day and, when moving, on the excluded days next to it (at most
`MAX_SHIFT_DAYS`), so a day's runs are found without looking further.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any

from horarium.recurrence.api import Occurrence, Plan
from horarium.recurrence.api import _created as checked_now
from horarium.recurrence.api import plan as plan_series
from horarium.recurrence.calendars import Calendars, Exclusion, Zoned, read_calendar
from horarium.recurrence.errors import RecurrenceError

RESOLVED = "resolvedCalendars"  # internal property of a stored definition: name -> properties
MODES = ("Skip", "NextBusinessDay", "PreviousBusinessDay")
MAX_CALENDARS = 10  # names in recurrence.excludeCalendars
MAX_SHIFT_DAYS = 31  # an execution moves at most this many days; else it is skipped
HORIZON_DAYS = 3660  # executions excluded for this long in a row: the series has ended
# Checks of an instant or a day against the calendars one search may make (finding the next
# run, or a listing); past it the search stops with an error naming the limit.
MAX_CHECKS = 20_000

__all__ = [
    "MODES",
    "RESOLVED",
    "ExcludingPlan",
    "Placement",
    "Run",
    "exclusion_mode",
    "exclusion_names",
    "outline",
    "plan",
    "preview",
]


@dataclass(frozen=True, slots=True)
class Placement:
    """One execution of the schedule and what the calendars did to it."""

    scheduled: datetime  # the schedule's instant (aware UTC)
    instant: datetime | None  # where it runs; None: skipped
    calendar: str | None  # the calendar that excluded `scheduled`; None: not excluded


@dataclass(frozen=True, slots=True)
class Run:
    """An entry of `outline`: an execution that runs (`instant`), or one that is skipped
    (`instant` None); `scheduled` are the schedule's instants it stands for (several when moved
    executions land on one instant)."""

    instant: datetime | None
    scheduled: tuple[datetime, ...]
    calendar: str | None  # the calendar that moved or skipped it; None: runs as scheduled


@dataclass(frozen=True, slots=True)
class _Batch:
    runs: list[tuple[datetime, list[Placement]]]  # the day's runs, in order
    skipped: list[Placement]  # executions scheduled on the day that do not run
    scanned: bool  # the schedule had executions in the day's window
    next_day: date | None  # the next day that can hold a run; None: the schedule has ended


def exclusion_names(properties: Mapping[str, Any]) -> tuple[str, ...]:
    """`recurrence.excludeCalendars` as given (validated); () when absent."""
    recurrence = _lookup(properties, "recurrence")
    if not isinstance(recurrence, Mapping):
        return ()
    value = _lookup(recurrence, "excludeCalendars")
    if value is None:
        return ()
    path = "recurrence.excludeCalendars"
    if not isinstance(value, list) or not value:
        raise RecurrenceError(path, "must be a non-empty list of calendar names")
    if len(value) > MAX_CALENDARS:
        raise RecurrenceError(path, f"{len(value)} calendars given, at most {MAX_CALENDARS}")
    seen: dict[str, int] = {}
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name.strip():
            raise RecurrenceError(f"{path}[{i}]", "must be a calendar name")
        if name.lower() in seen:
            raise RecurrenceError(f"{path}[{i}]", f"{name!r} repeats {path}[{seen[name.lower()]}]")
        seen[name.lower()] = i
    return tuple(value)


def exclusion_mode(properties: Mapping[str, Any]) -> str:
    """`recurrence.onExcluded` in its canonical spelling (validated); `Skip` when absent."""
    recurrence = _lookup(properties, "recurrence")
    value = _lookup(recurrence, "onExcluded") if isinstance(recurrence, Mapping) else None
    if value is None:
        return "Skip"
    if isinstance(value, str):
        for mode in MODES:
            if value.strip().lower() == mode.lower():
                return mode
    raise RecurrenceError("recurrence.onExcluded", f"{value!r} is not one of {', '.join(MODES)}")


def _calendars(properties: Mapping[str, Any], names: tuple[str, ...], plan: Plan) -> Calendars:
    resolved = properties.get(RESOLVED) or {}
    if not isinstance(resolved, Mapping):
        raise RecurrenceError(RESOLVED, "must be an object of calendars by name")
    by_key = {str(k).lower(): (str(k), v) for k, v in resolved.items()}
    zoned: list[Zoned] = []
    for i, name in enumerate(names):
        found = by_key.get(name.lower())
        if found is None:
            raise RecurrenceError(
                f"recurrence.excludeCalendars[{i}]", f"{name!r} is not one of the calendars given"
            )
        canonical = read_calendar(found[1], f"calendars.{found[0]}", to_the_end=False)
        zoned.append(Zoned(found[0], canonical, plan.zone))
    return Calendars(zoned, plan.zone)


def plan(properties: Mapping[str, Any], *, created: datetime) -> Plan:
    """`horarium.recurrence.plan`: the schedule's series, less what the listed calendars
    exclude (an `ExcludingPlan`) when `recurrence.excludeCalendars` is given."""
    base = plan_series(properties, created=created)
    names = exclusion_names(properties)
    mode = exclusion_mode(properties)
    if not names or not base.recurring:
        return base
    return ExcludingPlan(base, _calendars(properties, names, base), mode)


def preview(
    properties: Mapping[str, Any],
    *,
    now: datetime,
    count: int = 10,
    calendars: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[datetime]:
    """The next `count` executions (aware UTC) of a job created at `now`, `calendars` being the
    calendars it may list (by name, as the resource's `properties`)."""
    compiled = plan(with_calendars(properties, calendars), created=checked_now(now, "now"))
    wanted = count if compiled.count is None else min(count, compiled.count)
    if wanted <= 0:
        return []
    return list(islice(compiled.iter_from(compiled.created), wanted))


def with_calendars(
    properties: Mapping[str, Any], calendars: Mapping[str, Mapping[str, Any]] | None
) -> Mapping[str, Any]:
    """`properties` carrying `calendars` (by name) the way a stored definition does."""
    if calendars is None:
        return properties
    if not isinstance(calendars, Mapping):
        raise RecurrenceError("calendars", "must be an object of calendar properties by name")
    return {**properties, RESOLVED: dict(calendars)}


def outline(series: Plan, start: datetime, count: int) -> list[Run]:
    """The next `count` runs from `start`, with the executions that calendars skip among them
    (at most `count` of those)."""
    if isinstance(series, ExcludingPlan):
        return series.outline(start, count)
    return [Run(t, (t,), None) for t in islice(series.iter_from(start), count)]


class ExcludingPlan(Plan):
    """A `Plan` whose executions the listed calendars skip or move. It answers as `Plan` does
    (``first``, ``at_or_after``, ``after``, ``iter_from``, ``describe``); `count` counts the
    executions that run."""

    __slots__ = (
        "_base",
        "_batches",
        "_calendars",
        "_checks",
        "_first_run",
        "_floor",
        "_placed",
        "mode",
    )

    def __init__(self, base: Plan, calendars: Calendars, mode: str) -> None:
        # `Plan`'s attributes come from the schedule's own series; its search is replaced.
        self.zone = base.zone
        self.recurring = base.recurring
        self.count = base.count
        self.end = base.end
        self.created = base.created
        self._end = None
        self._first = None
        self._series = None
        self._base = base
        self._calendars = calendars
        self.mode = mode
        self._batches: dict[date, _Batch] = {}
        self._checks = 0  # made by the search under way
        self._placed: dict[datetime, tuple[Placement, Exclusion | None]] = {}
        self._floor = base.first  # nothing runs before the schedule's first execution
        found = self._landing(self._floor) if self._floor is not None else None
        self._first_run = None if found is None else found[0]

    @property
    def first(self) -> datetime | None:
        return self._first_run

    def at_or_after(self, instant: datetime) -> datetime | None:
        found = self._landing(_aware(instant))
        return None if found is None else found[0]

    def after(self, instant: datetime) -> datetime | None:
        return self.at_or_after(_aware(instant) + _ONE_US)

    def iter_from(self, instant: datetime) -> Iterator[datetime]:
        found = self._landing(_aware(instant))
        while found is not None:
            yield found[0]
            found = self._landing(found[0] + _ONE_US)

    def describe(self, instant: datetime) -> Occurrence:
        """As `Plan.describe`; for an execution a calendar moved, `wall` is the wall-clock time
        it asked for on the day it moved to, and the marks are daylight saving's alone."""
        instant = _aware(instant).astimezone(UTC)
        self._checks = 0
        landed = dict(self._batch(self._day(instant)).runs).get(instant)
        if not landed or any(p.calendar is None for p in landed):
            return self._base.describe(instant)
        local = instant.astimezone(self.zone)
        asked = datetime.combine(local.date(), landed[0].scheduled.astimezone(self.zone).time())
        first = asked.replace(tzinfo=self.zone, fold=0)
        moved = first.astimezone(UTC).astimezone(self.zone).replace(tzinfo=None) != asked
        twice = first.utcoffset() != asked.replace(tzinfo=self.zone, fold=1).utcoffset()
        return Occurrence(
            instant=instant, local=local, wall=asked, moved=moved, merged=twice and not moved
        )

    def outline(self, start: datetime, count: int) -> list[Run]:
        """See `outline`."""
        start = _aware(start).astimezone(UTC)
        self._checks = 0
        found: list[Run] = []
        ran = skipped = 0
        day: date | None = self._day(max(start, self._floor or start))
        barren: date | None = None
        while day is not None and ran < count:
            batch = self._batch(day)
            entries = [
                Run(instant, _scheduled(placements), _mover(placements))
                for instant, placements in batch.runs
                if instant >= start
            ]
            entries += [Run(None, (p.scheduled,), p.calendar) for p in batch.skipped]
            for entry in sorted(entries, key=lambda e: e.instant or e.scheduled[0]):
                if entry.instant is not None:
                    found.append(entry)
                    ran += 1
                    if ran >= count:
                        break
                elif entry.scheduled[0] >= start and skipped < count:
                    found.append(entry)
                    skipped += 1
            barren = _barren(barren, day, batch)
            if barren is not None and (day - barren).days > HORIZON_DAYS:
                break
            day = batch.next_day
        return found

    # --- the search -------------------------------------------------------------------------

    def _landing(self, t: datetime) -> tuple[datetime, list[Placement]] | None:
        """The first run at or after `t`, and the executions it stands for."""
        if self._floor is None:
            return None
        t = max(t.astimezone(UTC), self._floor)
        self._checks = 0
        day: date | None = self._day(t)
        barren: date | None = None
        while day is not None:
            batch = self._batch(day)
            for instant, placements in batch.runs:
                if instant >= t:
                    return instant, placements
            barren = _barren(barren, day, batch)
            if barren is not None and (day - barren).days > HORIZON_DAYS:
                return None
            day = batch.next_day
        return None

    def _day(self, instant: datetime) -> date:
        return instant.astimezone(self.zone).date()

    def _batch(self, day: date) -> _Batch:
        found = self._batches.get(day)
        if found is None:
            found = self._compute(day)
            if len(self._batches) >= 512:
                self._batches.clear()
            self._batches[day] = found
        return found

    def _compute(self, day: date) -> _Batch:
        """The runs that land on the local `day`."""
        low, high = day, day
        if self.mode == "NextBusinessDay":
            low = day - timedelta(days=self._run_of_busy(day, -1))
        elif self.mode == "PreviousBusinessDay":
            high = day + timedelta(days=self._run_of_busy(day, +1))
        stop = self._calendars.day_start(high + _ONE_DAY)
        landed: dict[datetime, list[Placement]] = {}
        skipped: list[Placement] = []
        later: date | None = None  # the first later day an execution of the window moved to
        scanned = False
        cursor: datetime | None = self._calendars.day_start(low)
        beyond: datetime | None = None
        inside: Exclusion | None = None  # the exclusion the last execution fell in
        while cursor is not None:
            jump: datetime | None = None
            for scheduled in self._base.iter_from(cursor):
                if scheduled >= stop:
                    beyond = scheduled
                    break
                scanned = True
                self._charge()
                if self.mode == "Skip" and inside is not None and scheduled < inside.until:
                    placed = Placement(scheduled, None, inside.calendar)  # the same exclusion
                else:
                    placed, inside = self._placement(scheduled)
                if placed.instant is None:
                    if self._day(scheduled) == day:
                        skipped.append(placed)
                elif (landing := self._day(placed.instant)) == day:
                    landed.setdefault(placed.instant, []).append(placed)
                elif landing > day and (later is None or landing < later):
                    later = landing
                jump = self._passed_over(scheduled, inside)
                if jump is not None:
                    break
            cursor = jump
        next_day = None if beyond is None else self._next_day(day, self._day(beyond))
        if later is not None and (next_day is None or later < next_day):
            next_day = later
        return _Batch(
            runs=sorted(landed.items(), key=lambda pair: pair[0]),
            skipped=skipped,
            scanned=scanned,
            next_day=next_day,
        )

    def _next_day(self, day: date, upcoming: date) -> date:
        """The next day to look at, after `day`, when the schedule's next execution after the
        window is on `upcoming`."""
        if self.mode == "PreviousBusinessDay":
            upcoming -= timedelta(days=self._run_of_busy(upcoming, -1) + 1)
        return max(day + _ONE_DAY, upcoming)

    def _passed_over(self, scheduled: datetime, exclusion: Exclusion | None) -> datetime | None:
        """Where the search may go on from when `scheduled` lies deep in a long `exclusion`
        (every execution before that instant is skipped too); None: look at the next one."""
        if exclusion is None:
            return None
        if self.mode == "Skip":
            return exclusion.until if exclusion.until - scheduled > _LONG else None
        if self.mode == "NextBusinessDay":
            # Executions more than the longest move before the end cannot leave it.
            if exclusion.until - scheduled > _REACH:
                return exclusion.until - _REACH
            return None
        # PreviousBusinessDay: from this far past its start on, none of them can leave it.
        return exclusion.until if scheduled - exclusion.since > _REACH else None

    def _run_of_busy(self, day: date, step: int) -> int:
        """How many days next to `day` (before it: step −1, after it: +1) in a row have an
        exclusion, at most `MAX_SHIFT_DAYS`."""
        n = 0
        while n < MAX_SHIFT_DAYS:
            self._charge()
            if self._calendars.free(day + timedelta(days=step * (n + 1))):
                break
            n += 1
        return n

    def _charge(self) -> None:
        """Count one check against the calendars; past `MAX_CHECKS`, stop the search."""
        self._checks += 1
        if self._checks > MAX_CHECKS:
            raise RecurrenceError(
                "recurrence.excludeCalendars",
                f"finding the next runs takes more than {MAX_CHECKS} checks against the "
                "calendars (the limit): the schedule runs too often for what the calendars "
                "exclude; run it less often or move fewer executions (onExcluded)",
            )

    def _placement(self, scheduled: datetime) -> tuple[Placement, Exclusion | None]:
        """`_place`, each execution placed once (the days next to a day look at it again)."""
        found = self._placed.get(scheduled)
        if found is None:
            found = self._place(scheduled)
            if len(self._placed) >= _PLACED_KEPT:
                self._placed.clear()
            self._placed[scheduled] = found
        return found

    def _place(self, scheduled: datetime) -> tuple[Placement, Exclusion | None]:
        """Where the execution scheduled at `scheduled` runs (None: skipped)."""
        local = scheduled.astimezone(self.zone)
        self._charge()
        exclusion = self._calendars.excluded(scheduled, local.date())
        if exclusion is None:
            return Placement(scheduled, scheduled, None), None
        moved = None if self.mode == "Skip" else self._moved(local, exclusion)
        if moved is not None and (
            (self._floor is not None and moved < self._floor)
            or (self.end is not None and moved >= self.end)
        ):
            moved = None  # never before the first execution, never at or after endTime
        return Placement(scheduled, moved, exclusion.calendar), exclusion

    def _moved(self, local: datetime, exclusion: Exclusion) -> datetime | None:
        """The execution at `local` (excluded by `exclusion`) at the same wall-clock time on the
        nearest later or earlier day (by the mode) no listed calendar excludes then, at most
        `MAX_SHIFT_DAYS` away; None: there is none. Days whose time still lies inside
        `exclusion` are passed over unchecked."""
        later = self.mode == "NextBusinessDay"
        step = 1 if later else -1
        edge = self._day(exclusion.until if later else exclusion.since)
        wall = local.replace(tzinfo=None).time()
        for n in range(max(1, abs((edge - local.date()).days)), MAX_SHIFT_DAYS + 1):
            day = local.date() + timedelta(days=step * n)
            candidate = _instant(day, wall, self)
            self._charge()
            if self._calendars.excluded(candidate, day) is None:
                return candidate
        return None


def _instant(day: date, wall: time, plan: ExcludingPlan) -> datetime:
    """The wall-clock time on `day` as an instant (fold=0, as the schedule's own times)."""
    return datetime.combine(day, wall).replace(tzinfo=plan.zone, fold=0).astimezone(UTC)


def _barren(since: date | None, day: date, batch: _Batch) -> date | None:
    """Since when the search has seen executions but no run (None: it has seen a run)."""
    if batch.runs:
        return None
    if batch.scanned and since is None:
        return day
    return since


def _mover(placements: list[Placement]) -> str | None:
    return next((p.calendar for p in placements if p.calendar), None)


def _scheduled(placements: list[Placement]) -> tuple[datetime, ...]:
    return tuple(sorted({p.scheduled for p in placements}))


def _aware(instant: datetime) -> datetime:
    if not isinstance(instant, datetime) or instant.utcoffset() is None:
        raise RecurrenceError("instant", "must be an aware datetime")
    return instant


def _lookup(obj: Mapping[str, Any], name: str) -> Any:
    lowered = name.lower()
    for key, value in obj.items():
        if str(key).lower() == lowered and value is not None:
            return value
    return None


_ONE_DAY = timedelta(days=1)
_LONG = timedelta(days=7)  # Skip: executions in a longer exclusion are not looked at one by one
_REACH = timedelta(days=MAX_SHIFT_DAYS + 2)  # beyond the longest move, whatever the offsets
_PLACED_KEPT = 200_000  # placements a plan keeps
_ONE_US = timedelta(microseconds=1)
