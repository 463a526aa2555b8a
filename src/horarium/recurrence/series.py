"""The instants of a series, found directly from any instant (design doc §2–4).

Three shapes:
- `Elapsed`: Second / Minute / Hour without schedule, anchor + k·step in elapsed time.
- `HourMarks`: Hour with `minutes`: minute marks of every `interval`-th hour, elapsed time.
- `WallClock`: Day and longer: run days × times of day in the zone's wall clock, each wall
  time turned into an instant with fold=0 (a nonexistent time takes the pre-transition offset,
  a repeated one its first occurrence), equal instants counted once.

All work on integer microseconds (`timeline`). `at_or_after(t)` is the first instant ≥ t;
`iterate(t)` yields the instants ≥ t in order as datetimes, stepping with datetime arithmetic
(fast paths) and falling back to `at_or_after` near daylight-saving transitions.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from horarium.recurrence.days import Days
from horarium.recurrence.timeline import DAY, HOUR, LIMIT, SECOND, UNIX_EPOCH, to_instant

_ONE_US = timedelta(microseconds=1)
# Look this far back for the offset before a recent transition (covers Samoa's 24-hour jump).
_LOOKBACK = 26 * HOUR


@dataclass(frozen=True, slots=True)
class Wall:
    """A wall-clock time of the schedule that lands on an instant (for `Plan.describe`)."""

    wall: int
    nonexistent: bool  # in a spring-forward gap: shifted by the pre-transition offset
    repeated: bool  # in a fall-back overlap: the first of its two instants


class Series(Protocol):
    def at_or_after(self, t: int) -> int | None: ...

    def iterate(self, t: int) -> Iterator[datetime]: ...

    def walls(self, u: int) -> list[Wall]: ...


class Elapsed:
    """anchor + k·step, k ≥ 0."""

    def __init__(self, anchor: int, step: int) -> None:
        self.anchor = anchor
        self.step = step

    def at_or_after(self, t: int) -> int | None:
        if t <= self.anchor:
            return self.anchor
        found = self.anchor + -((self.anchor - t) // self.step) * self.step
        return found if found <= LIMIT else None

    def iterate(self, t: int) -> Iterator[datetime]:
        found = self.at_or_after(t)
        if found is None:
            return
        step = timedelta(microseconds=self.step)
        stop = to_instant(LIMIT) - step
        current = to_instant(found)
        while True:
            yield current
            if current > stop:
                return
            current += step

    def walls(self, u: int) -> list[Wall]:
        return []


class HourMarks:
    """Minute marks (`marks`, µs into the hour) of every period of `period` µs from `base`."""

    def __init__(self, base: int, period: int, marks: tuple[int, ...]) -> None:
        self.base = base
        self.period = period
        self.marks = marks

    def at_or_after(self, t: int) -> int | None:
        k, into = divmod(t - self.base, self.period)
        i = bisect_left(self.marks, into)
        if i < len(self.marks):
            found = self.base + k * self.period + self.marks[i]
        else:
            found = self.base + (k + 1) * self.period + self.marks[0]
        return found if found <= LIMIT else None

    def iterate(self, t: int) -> Iterator[datetime]:
        found = self.at_or_after(t)
        if found is None:
            return
        k, into = divmod(found - self.base, self.period)
        marks = [timedelta(microseconds=m) for m in self.marks]
        first = marks[bisect_left(self.marks, into) :]
        period = timedelta(microseconds=self.period)
        stop = to_instant(LIMIT - self.period)
        start = to_instant(self.base + k * self.period)
        while start <= stop:
            yield from map(start.__add__, first)
            first = marks
            start += period

    def walls(self, u: int) -> list[Wall]:
        return []


class WallClock:
    """Run days (`days`) × times of day (`times`, µs after midnight) in `zone`'s wall clock."""

    def __init__(self, days: Days, times: tuple[int, ...], zone: ZoneInfo, fixed: bool) -> None:
        self.days = days
        self.times = times  # sorted
        self.zone = zone
        self.fixed_offset: int | None = None
        if fixed:
            self.fixed_offset = self.offset_at(0)
        self._zoned_epoch = datetime(1, 1, 1, tzinfo=zone)
        self._deltas = tuple(timedelta(microseconds=x) for x in times)

    # --- wall-clock side ---

    def next_wall(self, c: int) -> int | None:
        """The first wall-clock time of the schedule at or after wall time `c`."""
        d, tod = divmod(c, DAY)
        found = self.days.next_day(d)
        if found is None:
            return None
        if found == d:
            i = bisect_left(self.times, tod)
            if i < len(self.times):
                return c - tod + self.times[i]
            found = self.days.next_day(d + 1)
            if found is None:
                return None
        wall = found * DAY + self.times[0]
        return wall if wall <= LIMIT else None

    def offsets(self, c: int) -> tuple[int, int]:
        """UTC offsets (µs) wall time `c` takes with fold=0 and fold=1; they differ near DST."""
        local = self._zoned_epoch + timedelta(microseconds=c)
        first = local.utcoffset()
        second = local.replace(fold=1).utcoffset()
        assert first is not None and second is not None
        return first // _ONE_US, second // _ONE_US

    def offset_at(self, u: int) -> int:
        """The UTC offset (µs) in force at instant `u`. Transitions fall on whole seconds, so
        the POSIX second (the quickest way into the zone) is exact."""
        seconds = (u - UNIX_EPOCH) // SECOND
        if seconds >= 0:
            local = datetime.fromtimestamp(seconds, self.zone)
        else:
            local = to_instant(u).astimezone(self.zone)
        offset = local.utcoffset()
        assert offset is not None
        return offset // _ONE_US

    # --- instants ---

    def at_or_after(self, t: int) -> int | None:
        if t > LIMIT:
            return None
        if self.fixed_offset is not None:
            c = self.next_wall(t + self.fixed_offset)
            return None if c is None else c - self.fixed_offset
        # Walls before t + (smallest offset around t) resolve before t. Resolution is monotone
        # except for nonexistent walls, which jump forward: keep looking past those.
        low = min(self.offset_at(t), self.offset_at(t - _LOOKBACK))
        c = self.next_wall(t + low)
        best: int | None = None
        while c is not None:
            first, second = self.offsets(c)
            u = c - first
            if u >= t:
                if best is None or u < best:
                    best = u
                if first >= second:  # an existing wall time: nothing later resolves earlier
                    return best
            c = self.next_wall(c + 1)
        return best

    def iterate(self, t: int) -> Iterator[datetime]:
        """Day by day: a run day whose instants lie where the zone's offset is steady (checked
        26 h before its first instant and at its last) is emitted by arithmetic; near a
        transition, exact `at_or_after` steps."""
        times, deltas, days = self.times, self._deltas, self.days
        fixed = self.fixed_offset
        while True:
            u = self.at_or_after(t)
            if u is None:
                return
            offset = fixed if fixed is not None else self.offset_at(u)
            d, tod = divmod(u + offset, DAY)
            i = bisect_left(times, tod)
            progressed = False
            if i < len(times) and times[i] == tod:
                while True:
                    base = d * DAY - offset
                    if fixed is None and (
                        self.offset_at(base + times[i] - _LOOKBACK) != offset
                        or self.offset_at(base + times[-1]) != offset
                    ):
                        break
                    yield from map(to_instant(base).__add__, deltas[i:] if i else deltas)
                    progressed = True
                    t = base + times[-1] + 1
                    found = days.next_day(d + 1)
                    if found is None or found * DAY + times[-1] > LIMIT:
                        return
                    d, i = found, 0
            if not progressed:  # next to a transition: one exact step
                yield to_instant(u)
                t = u + 1

    def walls(self, u: int) -> list[Wall]:
        """The schedule's wall-clock times that resolve to instant `u`."""
        found: list[Wall] = []
        here = u + self.offset_at(u)
        first, second = self.offsets(here)
        if here - first == u and self.next_wall(here) == here:
            found.append(Wall(here, nonexistent=False, repeated=first > second))
        if self.fixed_offset is None:
            shifted = u + self.offset_at(u - _LOOKBACK)
            if shifted != here:
                first, second = self.offsets(shifted)
                if first < second and shifted - first == u and self.next_wall(shifted) == shifted:
                    found.append(Wall(shifted, nonexistent=True, repeated=False))
        return found
