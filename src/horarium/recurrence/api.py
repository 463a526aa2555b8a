"""`plan` compiles a job's timing into a `Plan`; `preview` lists its next executions."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from horarium.recurrence.cron import CronDays
from horarium.recurrence.days import (
    Days,
    EveryDays,
    Monthly,
    Weekly,
    Yearly,
    clamped_picker,
    month_picker,
    ymd,
)
from horarium.recurrence.errors import RecurrenceError
from horarium.recurrence.gaps import shortest_gap
from horarium.recurrence.jitter import Jitter
from horarium.recurrence.parse import EARLIEST, LATEST, Rule, Schedule, parse_when, read_rule
from horarium.recurrence.series import Elapsed, HourMarks, Series, Wall, WallClock
from horarium.recurrence.timeline import (
    DAY,
    HOUR,
    MINUTE,
    SECOND,
    from_instant,
    from_wall,
    to_instant,
    to_wall,
)
from horarium.recurrence.zones import UTC_ZONE, find_zone, is_fixed

__all__ = ["Occurrence", "Plan", "RecurrenceError", "parse_instant", "plan", "preview"]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One execution as people read it: its instant, its wall-clock time in the job's zone, and
    what daylight saving time did to it.

    `moved`: the asked-for wall time (`wall`) did not exist (spring forward); it runs at `local`.
    `merged`: the asked-for wall time occurred twice (it runs once, at the first), or two
    asked-for wall times name this one instant (it runs once).
    """

    instant: datetime  # aware UTC
    local: datetime  # the same instant in the job's zone
    wall: datetime  # naive: the wall-clock time the schedule asked for (differs when moved)
    moved: bool
    merged: bool
    nominal: datetime | None = None  # with jitter: the instant the schedule named (aware UTC)
    jitter: timedelta = timedelta(0)  # instant − nominal


class Plan:
    """A job's validated, compiled series. See the package docstring for the contract."""

    __slots__ = (
        *("_end", "_first", "_jitter", "_series"),
        *("count", "created", "end", "recurring", "zone"),
    )

    def __init__(self, rule: Rule, created: datetime) -> None:
        self.zone: ZoneInfo = rule.zone
        self.recurring: bool = rule.frequency is not None
        self.count: int | None = rule.count
        self._end: int | None = from_instant(rule.end) if rule.end else None
        self.end: datetime | None = None if self._end is None else to_instant(self._end)
        self.created: datetime = created
        created_us = from_instant(created)
        start_us = from_instant(rule.start.instant) if rule.start else None
        self._series: Series | None = None
        if not self.recurring:
            first: int | None = created_us
            if start_us is not None and start_us >= created_us:
                first = start_us
        else:
            self._series = _compile(rule, created)
            if start_us is None and rule.cron is None:
                first = created_us  # no startTime: run once at once, then by the schedule
            else:
                first = self._series.at_or_after(max(start_us or created_us, created_us))
            if first is not None and self._end is not None and first >= self._end:
                first = None
        self._first = first
        self._jitter = _jitter(rule, created_us, self._nominal)

    @property
    def first(self) -> datetime | None:
        """The first execution (aware UTC), or None when the series is empty."""
        found = self._first if self._jitter is None else self._at_or_after(0)
        return None if found is None else to_instant(found)

    def at_or_after(self, instant: datetime) -> datetime | None:
        """The first execution at or after `instant` (endTime honoured, count not)."""
        found = self._at_or_after(_micros(instant, "instant"))
        return None if found is None else to_instant(found)

    def after(self, instant: datetime) -> datetime | None:
        """The first execution strictly after `instant` (endTime honoured, count not)."""
        found = self._at_or_after(_micros(instant, "instant") + 1)
        return None if found is None else to_instant(found)

    def iter_from(self, instant: datetime) -> Iterator[datetime]:
        """Executions at or after `instant`, in order (endTime honoured, count not)."""
        return self._iterate(_micros(instant, "instant"))

    def _iterate(self, t: int) -> Iterator[datetime]:
        if self._jitter is not None:
            nominal = self._nominal_iterate(t - self._jitter.window + 1)
            return self._jitter.iterate(t, nominal)
        return self._nominal_iterate(t)

    def _nominal_iterate(self, t: int) -> Iterator[datetime]:
        first = self._first
        if first is None:
            return
        if t <= first:
            yield to_instant(first)
            t = first + 1
        if self._series is None:
            return
        end = self.end
        if end is None:
            yield from self._series.iterate(t)
            return
        for found in self._series.iterate(t):
            if found >= end:
                return
            yield found

    def describe(self, instant: datetime) -> Occurrence:
        """`instant` on the job's wall clock, with what daylight saving time did to it."""
        u = _micros(instant, "instant")
        n = u
        if self._jitter is not None:
            n = self._jitter.nominal_of(u) or u
        utc = to_instant(u)
        local = utc.astimezone(self.zone)
        walls: list[Wall] = []
        if self._series is not None:
            try:
                walls = self._series.walls(n)
            except OverflowError:  # an instant at the very edge of the calendar: no marks
                walls = []
        moved = [w for w in walls if w.nonexistent]
        nominal_local = to_instant(n).astimezone(self.zone)
        asked = moved[0].wall if moved else from_wall(nominal_local.replace(tzinfo=None))
        return Occurrence(
            instant=utc,
            local=local,
            wall=to_wall(asked),
            moved=bool(moved),
            merged=len(walls) > 1 or any(w.repeated for w in walls),
            nominal=to_instant(n),
            jitter=timedelta(microseconds=u - n),
        )

    def _at_or_after(self, t: int) -> int | None:
        if self._jitter is not None:
            return self._jitter.at_or_after(t)
        return self._nominal(t)

    def _nominal(self, t: int) -> int | None:
        """The first instant the schedule names at or after `t` (before any jitter)."""
        first = self._first
        if first is None:
            return None
        if t <= first:
            return first
        if self._series is None:
            return None
        found = self._series.at_or_after(t)
        if found is None or (self._end is not None and found >= self._end):
            return None
        return found

    def __repr__(self) -> str:
        return f"<Plan first={self.first} zone={self.zone.key} count={self.count} end={self.end}>"


def plan(properties: Mapping[str, Any], *, created: datetime) -> Plan:
    """Validate a job's `properties` and compile its series; `created` is when the schedule was
    set (aware). Raises `RecurrenceError` for invalid input."""
    return Plan(read_rule(properties), _created(created, "created"))


def preview(properties: Mapping[str, Any], *, now: datetime, count: int = 10) -> list[datetime]:
    """The next `count` executions (aware UTC) of a job created at `now`; fewer when the series
    ends (endTime, or the recurrence's own count)."""
    compiled = plan(properties, created=_created(now, "now"))
    wanted = count if compiled.count is None else min(count, compiled.count)
    found: list[datetime] = []
    if wanted <= 0:
        return found
    for instant in compiled.iter_from(compiled.created):
        found.append(instant)
        if len(found) >= wanted:
            break
    return found


def parse_instant(value: Any, zone: ZoneInfo | str | None = None) -> datetime:
    """An ISO 8601 date-time as an aware UTC datetime, read as the recurrence contract reads
    `startTime` / `endTime`: with an offset or Z it is that instant; without one it is wall-clock
    time in `zone` (UTC when None; a DST gap takes the pre-transition offset); a date alone is
    midnight in `zone`. Raises `RecurrenceError` (field ``value``)."""
    if isinstance(zone, str):
        named = find_zone(zone)
        if named is None:
            raise RecurrenceError("timeZone", f"{zone!r} is not a known IANA or Windows time zone")
        zone = named
    return parse_when(value, zone or UTC_ZONE, "value").instant


def _compile(rule: Rule, created: datetime) -> Series:
    """The series of a recurring job (anchor: startTime, else created)."""
    zone = rule.zone
    if rule.start is not None:
        anchor = from_instant(rule.start.instant)
        anchor_wall = from_wall(rule.start.wall)
    else:
        anchor = from_instant(created)
        anchor_wall = from_wall(created.astimezone(zone).replace(tzinfo=None))
    if rule.cron is not None:
        return WallClock(CronDays(rule.cron), rule.cron.times, zone, is_fixed(zone))
    schedule = rule.schedule
    frequency = rule.frequency
    n = rule.interval
    if frequency in ELAPSED and schedule is None:
        return Elapsed(anchor, n * ELAPSED[frequency])
    if frequency == "Hour":
        assert schedule is not None and schedule.minutes is not None
        local = anchor + (to_instant(anchor).astimezone(zone).utcoffset() or _ZERO) // _US
        base = anchor - local % HOUR  # the start of the anchor's hour on the zone's clock
        return HourMarks(base, n * HOUR, tuple(m * MINUTE for m in schedule.minutes))
    anchor_day = anchor_wall // DAY
    days: Days
    if frequency == "Day":
        days = EveryDays(anchor_day, n)
    elif frequency == "Week":
        weekdays = schedule.week_days if schedule and schedule.week_days else None
        days = Weekly(anchor_day, n, weekdays or (anchor_day % 7,))
    elif frequency == "Month":
        if schedule is None:
            days = Monthly(anchor_day, n, clamped_picker(ymd(anchor_day)[2]))
        else:
            month_days = schedule.month_days or ()
            occurrences = schedule.occurrences or ()
            if not month_days and not occurrences:
                month_days = (ymd(anchor_day)[2],)
            days = Monthly(anchor_day, n, month_picker(month_days, occurrences))
    else:  # Year: the anchor's date; without schedule Feb 29 clamps like AddMonths(12)
        days = Yearly(anchor_day, n, clamp=schedule is None)
    return WallClock(days, _times(schedule, anchor_wall % DAY), zone, is_fixed(zone))


def _times(schedule: Schedule | None, anchor_time: int) -> tuple[int, ...]:
    """Times of day (µs after midnight): hours × minutes, missing ones from the anchor (§3)."""
    if schedule is None:
        return (anchor_time,)
    hour, rest = divmod(anchor_time, HOUR)
    minute, below_minute = divmod(rest, MINUTE)
    minutes = schedule.minutes or (minute,)
    if schedule.hours:
        hours: tuple[int, ...] | range = schedule.hours
    else:
        hours = range(24) if schedule.minutes else (hour,)
    seconds = 0 if schedule.minutes else below_minute
    return tuple(sorted({h * HOUR + m * MINUTE + seconds for h in hours for m in minutes}))


def _jitter(rule: Rule, created: int, nominal: Callable[[int], int | None]) -> Jitter | None:
    """Start each execution at its offset (`jitter`); at most the recurrence's shortest gap."""
    if not rule.jitter:
        return None
    window = rule.jitter // _US
    gap = shortest_gap(rule)
    if gap is not None and window > gap:
        raise RecurrenceError(
            "recurrence.jitter",
            f"{rule.jitter} is longer than the shortest gap between two runs"
            f" ({timedelta(microseconds=gap)})",
        )
    return Jitter(window, created, nominal)


def _created(value: datetime, field: str) -> datetime:
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise RecurrenceError(field, "must be an aware datetime")
    utc = value.astimezone(UTC)
    if not EARLIEST <= utc.replace(tzinfo=None) < LATEST:
        raise RecurrenceError(field, f"{value} is outside 1900-01-01..9000-01-01")
    return utc


def _micros(instant: datetime, field: str) -> int:
    if not isinstance(instant, datetime) or instant.utcoffset() is None:
        raise RecurrenceError(field, "must be an aware datetime")
    return from_instant(instant)


_US = timedelta(microseconds=1)
_ZERO = timedelta(0)
ELAPSED = {"Second": SECOND, "Minute": MINUTE, "Hour": HOUR}  # step in elapsed time
