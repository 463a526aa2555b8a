"""Which calendar days a series runs on (design doc §2–3), answered directly.

A day is its index ``d = date.toordinal() - 1``; ``d % 7`` is its ISO weekday (0 = Monday) and
``d // 7`` its Monday-based week. `next_day(d)` is the first run day at or after `d`, found by
arithmetic on the period index, so its cost does not depend on how far back the anchor lies.
"""

from __future__ import annotations

import calendar
from bisect import bisect_left
from collections.abc import Callable
from datetime import date
from functools import lru_cache
from math import gcd
from typing import Protocol

from horarium.recurrence.timeline import DAY, LIMIT

LAST_DAY = LIMIT // DAY
GREGORIAN_MONTHS = 4800  # the calendar repeats every 400 years


class Days(Protocol):
    def next_day(self, d: int) -> int | None:
        """The first run day at or after day `d`, or None when there is none (before year 10000)."""
        ...


def ymd(d: int) -> tuple[int, int, int]:
    day = date.fromordinal(d + 1)
    return day.year, day.month, day.day


@lru_cache(maxsize=8192)
def month_info(index: int) -> tuple[int, int, int]:
    """For month ``year * 12 + month - 1``: (index of its first day, length, weekday of the 1st)."""
    year, month0 = divmod(index, 12)
    first_weekday, length = calendar.monthrange(year, month0 + 1)
    return date(year, month0 + 1, 1).toordinal() - 1, length, first_weekday


class EveryDays:
    """Every `interval`-th day counted from the anchor's day (frequency Day)."""

    def __init__(self, anchor_day: int, interval: int) -> None:
        self.anchor = anchor_day
        self.interval = interval

    def next_day(self, d: int) -> int | None:
        found = d + (self.anchor - d) % self.interval
        return found if found <= LAST_DAY else None


class Weekly:
    """`weekdays` of every `interval`-th Monday-based week counted from the anchor's week."""

    def __init__(self, anchor_day: int, interval: int, weekdays: tuple[int, ...]) -> None:
        self.anchor_week = anchor_day // 7
        self.interval = interval
        self.weekdays = weekdays  # sorted, 0 = Monday

    def next_day(self, d: int) -> int | None:
        week, weekday = divmod(d, 7)
        if (week - self.anchor_week) % self.interval == 0:
            i = bisect_left(self.weekdays, weekday)
            if i < len(self.weekdays):
                return week * 7 + self.weekdays[i]
        week += 1 + (self.anchor_week - week - 1) % self.interval
        found = week * 7 + self.weekdays[0]
        return found if found <= LAST_DAY else None


DayPicker = Callable[[int, int], tuple[int, ...]]  # (length, weekday of the 1st) -> days 1..31


class Monthly:
    """Days of every `interval`-th month counted from the anchor's month, chosen by `pick`."""

    def __init__(self, anchor_day: int, interval: int, pick: DayPicker) -> None:
        year, month, _ = ymd(anchor_day)
        self.anchor_month = year * 12 + month - 1
        self.interval = interval
        self._pick = pick
        self._picked: dict[tuple[int, int], tuple[int, ...]] = {}
        self._cycle = GREGORIAN_MONTHS // gcd(interval, GREGORIAN_MONTHS) + 1

    def days_of(self, length: int, first_weekday: int) -> tuple[int, ...]:
        key = (length, first_weekday)
        days = self._picked.get(key)
        if days is None:
            days = self._picked[key] = self._pick(length, first_weekday)
        return days

    def next_day(self, d: int) -> int | None:
        year, month, day = ymd(d)
        index = year * 12 + month - 1
        if (index - self.anchor_month) % self.interval == 0:
            start, length, first_weekday = month_info(index)
            days = self.days_of(length, first_weekday)
            i = bisect_left(days, day)
            if i < len(days):
                return start + days[i] - 1
        index += 1 + (self.anchor_month - index - 1) % self.interval
        for _ in range(self._cycle):  # a whole calendar cycle without a day: none ever
            if index >= 9999 * 12:
                return None
            start, length, first_weekday = month_info(index)
            days = self.days_of(length, first_weekday)
            if days:
                return start + days[0] - 1
            index += self.interval
        return None


def month_picker(
    month_days: tuple[int, ...],
    occurrences: tuple[tuple[int, int | None], ...],
) -> DayPicker:
    """Union of `monthDays` and `monthlyOccurrences`; days a month lacks are skipped (§3)."""

    def pick(length: int, first_weekday: int) -> tuple[int, ...]:
        days: set[int] = set()
        for number in month_days:
            day = number if number > 0 else length + 1 + number
            if 1 <= day <= length:
                days.add(day)
        for weekday, n in occurrences:
            first = 1 + (weekday - first_weekday) % 7
            all_of_them = range(first, length + 1, 7)
            if n is None:
                days.update(all_of_them)
            elif n > 0:
                if n <= len(all_of_them):
                    days.add(all_of_them[n - 1])
            elif -n <= len(all_of_them):
                days.add(all_of_them[n])
        return tuple(sorted(days))

    return pick


def clamped_picker(anchor_day_of_month: int) -> DayPicker:
    """The anchor's day, clamped to the month's last day as .NET `AddMonths` does (§2)."""

    def pick(length: int, first_weekday: int) -> tuple[int, ...]:
        return (min(anchor_day_of_month, length),)

    return pick


class Yearly:
    """The anchor's month and day in every `interval`-th year; Feb 29 clamps or skips."""

    def __init__(self, anchor_day: int, interval: int, *, clamp: bool) -> None:
        self.year, self.month, self.day = ymd(anchor_day)
        self.interval = interval
        self.clamp = clamp

    def next_day(self, d: int) -> int | None:
        year = ymd(d)[0]
        year += (self.year - year) % self.interval
        for _ in range(9):  # a Feb 29 anchor finds a leap year within 8 years
            if year > 9998:
                return None
            length = calendar.monthrange(year, self.month)[1]
            if self.day <= length or self.clamp:
                found = date(year, self.month, min(self.day, length)).toordinal() - 1
                if found >= d:
                    return found
            year += self.interval
        return None
