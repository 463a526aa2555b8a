"""`recurrence.cron`: a 5-field cron expression, or NCRONTAB's 6 fields with seconds first (as
Azure Functions timers write them), read into sorted sets (docs/recurrence.md §9).

Fields: [second,] minute, hour, day of month, month, day of week. Each field is a list of
items: `*`, a value, a range `a-b`, any of them with a step (`*/5`, `1-30/5`, `10/5`); month names
(JAN..DEC) and day names (SUN..SAT, 0 and 7 both Sunday). Quartz additions: in the day of month
`L` (the last day), `L-n` (n days before it), `nW` (the weekday nearest the n-th, within the
month), `LW` (the last weekday); in the day of week `5L` / `FRIL` (the last Friday; also `L5`)
and `MON#2` (the second Monday). `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
`@midnight`, `@hourly` stand for their usual expressions.

Day of month and day of week both restricted (neither starting with `*` or `?`) means either,
as Vixie cron does; otherwise both must match. `CronDays` answers "the first run day at or
after day d" month by month, never day by day; the times of day are minutes × hours.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any

from horarium.recurrence.days import GREGORIAN_MONTHS, LAST_DAY, month_info, ymd
from horarium.recurrence.errors import RecurrenceError
from horarium.recurrence.timeline import DAY, HOUR, MINUTE, SECOND

PATH = "recurrence.cron"
FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")
SECONDS_FIELDS = ("second", *FIELD_NAMES)  # NCRONTAB's six fields
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
MONTH_NAMES = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
DAY_NAMES = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_MONTH_LENGTHS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)  # February: 28 or 29


@dataclass(frozen=True, slots=True)
class Cron:
    """A validated cron expression. Weekdays are 0 = Monday … 6 = Sunday, as in `days`."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: frozenset[int]  # 1..12
    month_days: frozenset[int] = frozenset()  # plain days 1..31
    before_last: frozenset[int] = frozenset()  # `L-n`: n (`L` is 0)
    nearest: frozenset[int] = frozenset()  # `nW`: n
    last_weekday: bool = False  # `LW`
    weekdays: frozenset[int] = frozenset()
    last_of: frozenset[int] = frozenset()  # `5L`: the weekday
    nth: frozenset[tuple[int, int]] = frozenset()  # `MON#2`: (weekday, n)
    dom_star: bool = True
    dow_star: bool = True
    times: tuple[int, ...] = field(default=(), compare=False)  # µs after midnight, sorted
    seconds: tuple[int, ...] = (0,)  # NCRONTAB's first field; 0 for five fields

    def days_of(self, length: int, first_weekday: int) -> tuple[int, ...]:
        """The run days (1..length) of a month of `length` days starting on `first_weekday`."""
        return _days_of(self, length, first_weekday)


def read_cron(value: object) -> Cron:
    """Validate `recurrence.cron`; errors name the cron field and the item."""
    if not isinstance(value, str):
        kind = "a number" if isinstance(value, int | float) else type(value).__name__
        raise RecurrenceError(PATH, f"must be a string such as '*/15 * * * *', not {kind}")
    text = " ".join(value.split())
    expanded = MACROS.get(text.lower(), text)
    if expanded.startswith("@"):
        raise RecurrenceError(PATH, f"{text!r} is not one of {', '.join(MACROS)}")
    parts = expanded.split(" ")
    if len(parts) not in (5, 6):
        raise RecurrenceError(
            PATH,
            f"{text!r} has {len(parts)} fields; a cron expression has 5 "
            "(minute hour day-of-month month day-of-week), or 6 with the second first",
        )
    seconds = _plain(parts.pop(0), "second", 0, 59) if len(parts) == 6 else {0}
    minute, hour, dom, month, dow = parts
    days = _DaysField()
    week = _WeekField()
    for item in _items(dom, "day-of-month"):
        days.add(item)
    for item in _items(dow, "day-of-week"):
        week.add(item)
    minutes = _plain(minute, "minute", 0, 59)
    hours = _plain(hour, "hour", 0, 23)
    cron = Cron(
        text=text,
        minutes=tuple(sorted(minutes)),
        hours=tuple(sorted(hours)),
        months=frozenset(_plain(month, "month", 1, 12, MONTH_NAMES, 1)),
        month_days=frozenset(days.plain),
        before_last=frozenset(days.before_last),
        nearest=frozenset(days.nearest),
        last_weekday=days.last_weekday,
        weekdays=frozenset(week.plain),
        last_of=frozenset(week.last_of),
        nth=frozenset(week.nth),
        dom_star=dom.startswith(("*", "?")),
        dow_star=dow.startswith(("*", "?")),
        times=_times(hours, minutes, seconds),
        seconds=tuple(sorted(seconds)),
    )
    if not any(cron.days_of(n, f) for n, f in _month_shapes(cron.months)):
        raise RecurrenceError(PATH, f"{text!r} never matches a day of any year")
    return cron


def _times(hours: set[int], minutes: set[int], seconds: set[int]) -> tuple[int, ...]:
    """The run times of a day (µs after midnight, sorted): at most 24 × 60 × 60."""
    clock = (h * HOUR + m * MINUTE for h in hours for m in minutes)
    return tuple(sorted(t + s * SECOND for t in clock for s in seconds))


class CronDays:
    """The run days of a cron expression (a `days.Days`): month by month from day `d`."""

    def __init__(self, cron: Cron) -> None:
        self.cron = cron
        self._picked: dict[tuple[int, int], tuple[int, ...]] = {}
        self._span = (0, 0, 0)  # (first day, first day after, index) of the last month read

    def month(self, length: int, first_weekday: int) -> tuple[int, ...]:
        """The run days of a month of that shape (`Cron.days_of`, remembered)."""
        key = (length, first_weekday)
        days = self._picked.get(key)
        if days is None:
            days = self._picked[key] = self.cron.days_of(length, first_weekday)
        return days

    def next_day(self, d: int) -> int | None:
        first, after, index = self._span
        if first <= d < after:  # the month of the last question: no calendar arithmetic
            day = d - first + 1
        else:
            year, month, day = ymd(d)
            index = year * 12 + month - 1
        months = self.cron.months
        for _ in range(GREGORIAN_MONTHS + 1):  # every month shape recurs within 400 years
            if index >= 9999 * 12:
                return None
            if index % 12 + 1 in months:
                start, length, first_weekday = month_info(index)
                self._span = (start, start + length, index)
                days = self.month(length, first_weekday)
                i = bisect_left(days, day)
                if i < len(days):
                    found = start + days[i] - 1
                    return found if found <= LAST_DAY else None
            index += 1
            day = 1
        return None


@lru_cache(maxsize=1024)
def shortest_gap(cron: Cron) -> int:
    """The shortest time (µs) between two runs on the wall clock (daylight saving ignored):
    the closest times of one day, or the last time of a run day to the first of the next."""
    times = cron.times
    gaps = [b - a for a, b in pairwise(times)]
    span = times[-1] - times[0]
    days = CronDays(cron)
    previous: int | None = None
    shortest_days: int | None = None
    index = 2000 * 12  # one whole Gregorian cycle: every sequence of months occurs in it
    for _ in range(GREGORIAN_MONTHS):
        if index % 12 + 1 in cron.months:
            start, length, first_weekday = month_info(index)
            picked = days.month(length, first_weekday)
            if picked:
                steps = [b - a for a, b in pairwise(picked)]
                if previous is not None:
                    steps.append(start + picked[0] - 1 - previous)
                if steps:
                    low = min(steps)
                    shortest_days = low if shortest_days is None else min(shortest_days, low)
                    if shortest_days == 1:
                        break
                previous = start + picked[-1] - 1
        index += 1
    if shortest_days is not None:
        gaps.append(shortest_days * DAY - span)
    return min(gaps)


# --- day picking ---------------------------------------------------------------------------


def _days_of(cron: Cron, length: int, first_weekday: int) -> tuple[int, ...]:
    by_month = _month_days(cron, length, first_weekday)
    by_week = _week_days(cron, length, first_weekday)
    if cron.dom_star or cron.dow_star:  # `*`, `*/2`: both must match (Vixie cron)
        return tuple(sorted(by_month & by_week))
    return tuple(sorted(by_month | by_week))  # both restricted: either


def _month_days(cron: Cron, length: int, first_weekday: int) -> set[int]:
    days = {d for d in cron.month_days if d <= length}
    days.update(length - n for n in cron.before_last if n < length)
    for n in cron.nearest:
        if n <= length:
            days.add(_nearest_weekday(n, length, first_weekday))
    if cron.last_weekday:
        days.add(_nearest_weekday(length, length, first_weekday))
    return days


def _nearest_weekday(n: int, length: int, first_weekday: int) -> int:
    """The weekday (Monday..Friday) nearest day `n`, never leaving the month."""
    weekday = (first_weekday + n - 1) % 7
    if weekday == 5:  # Saturday: Friday before, or Monday after on the 1st
        return n - 1 if n > 1 else n + 2
    if weekday == 6:  # Sunday: Monday after, or Friday before on the last day
        return n + 1 if n < length else n - 2
    return n


def _week_days(cron: Cron, length: int, first_weekday: int) -> set[int]:
    days: set[int] = set()
    for weekday in cron.weekdays:
        days.update(range(1 + (weekday - first_weekday) % 7, length + 1, 7))
    for weekday in cron.last_of:
        days.add(range(1 + (weekday - first_weekday) % 7, length + 1, 7)[-1])
    for weekday, n in cron.nth:
        found = range(1 + (weekday - first_weekday) % 7, length + 1, 7)
        if n <= len(found):
            days.add(found[n - 1])
    return days


def _month_shapes(months: frozenset[int]) -> list[tuple[int, int]]:
    """(length, weekday of the 1st) of every month the expression allows, as years bring them."""
    shapes: list[tuple[int, int]] = []
    for month in months:
        lengths = (28, 29) if month == 2 else (_MONTH_LENGTHS[month - 1],)
        shapes.extend((n, f) for n in lengths for f in range(7))
    return shapes


# --- fields --------------------------------------------------------------------------------


def _items(text: str, name: str) -> list[str]:
    items = text.split(",")
    if any(not item for item in items):
        raise _error(name, text, "has an empty list item")
    return items


def _plain(
    text: str,
    name: str,
    low: int,
    high: int,
    names: tuple[str, ...] = (),
    first_name: int = 0,
) -> set[int]:
    """A field of values, ranges and steps only (minute, hour, month)."""
    found: set[int] = set()
    for item in _items(text, name):
        found.update(_range(item, name, low, high, names, first_name))
    return found


def _range(
    item: str, name: str, low: int, high: int, names: tuple[str, ...], first_name: int
) -> range:
    """`*`, `n`, `a-b`, each with an optional `/step`; `n/step` runs from n to the maximum."""
    base, slash, step_text = item.partition("/")
    step = 1
    if slash:
        step = _number(step_text, name, item, 1, high - low + 1, ())
    if base in ("*", "?"):
        if base == "?" and name not in ("day-of-month", "day-of-week"):
            raise _error(name, item, "'?' is only for day-of-month and day-of-week")
        return range(low, high + 1, step)
    start_text, dash, end_text = base.partition("-")
    start = _number(start_text, name, item, low, high, names, first_name)
    if not dash:  # `n/step` runs to the last value (Saturday, 6, for the day of week)
        last = min(high, 6) if name == "day-of-week" else high
        return range(start, (last if slash else start) + 1, step)
    end = _number(end_text, name, item, low, high, names, first_name)
    if end < start and name == "day-of-week" and end == 0:
        end = 7  # SAT-SUN, 5-0: up to Sunday
    if end < start:
        raise _error(name, item, f"the range runs backwards ({start} > {end})")
    return range(start, end + 1, step)


def _number(
    text: str,
    name: str,
    item: str,
    low: int,
    high: int,
    names: tuple[str, ...],
    first_name: int = 0,
) -> int:
    upper = text.upper()
    if upper in names:
        return names.index(upper) + first_name
    if not text.isdigit() or not text.isascii():
        shown = f" or a name ({names[0]}..{names[-1]})" if names else ""
        raise _error(name, item, f"{text!r} is not a number{shown}")
    number = int(text)
    if not low <= number <= high:
        raise _error(name, item, f"{number} is not in {low}..{high}")
    return number


class _DaysField:
    """Day-of-month items: plain ones, `L`, `L-n`, `nW`, `LW`."""

    def __init__(self) -> None:
        self.plain: set[int] = set()
        self.before_last: set[int] = set()
        self.nearest: set[int] = set()
        self.last_weekday = False

    def add(self, item: str) -> None:
        name = "day-of-month"
        upper = item.upper()
        if upper == "LW":
            self.last_weekday = True
        elif upper == "L":
            self.before_last.add(0)
        elif upper.startswith("L-"):
            self.before_last.add(_number(item[2:], name, item, 0, 30, ()))
        elif upper.endswith("W") and "/" not in item and "-" not in item:
            self.nearest.add(_number(item[:-1], name, item, 1, 31, ()))
        else:
            self.plain.update(_range(item, name, 1, 31, (), 0))


class _WeekField:
    """Day-of-week items: plain ones, `5L` / `FRIL` / `L5`, `MON#2`."""

    def __init__(self) -> None:
        self.plain: set[int] = set()
        self.last_of: set[int] = set()
        self.nth: set[tuple[int, int]] = set()

    def add(self, item: str) -> None:
        name = "day-of-week"
        upper = item.upper()
        day, hash_mark, nth = upper.partition("#")
        if hash_mark:
            weekday = _weekday(_number(day, name, item, 0, 7, DAY_NAMES))
            self.nth.add((weekday, _number(nth, name, item, 1, 5, ())))
        elif len(upper) > 1 and upper.endswith("L") and not upper.startswith("L"):
            self.last_of.add(_weekday(_number(upper[:-1], name, item, 0, 7, DAY_NAMES)))
        elif len(upper) > 1 and upper.startswith("L"):
            self.last_of.add(_weekday(_number(upper[1:], name, item, 0, 7, DAY_NAMES)))
        elif upper == "L":
            raise _error(name, item, "'L' needs a day: 5L or FRIL is the last Friday")
        else:
            self.plain.update(_weekday(d) for d in _range(item, name, 0, 7, DAY_NAMES, 0))


def _weekday(cron_day: int) -> int:
    """Cron's 0..7 (0 and 7 Sunday) as 0 = Monday … 6 = Sunday."""
    return (cron_day + 6) % 7


def _error(name: str, item: str, rule: str) -> RecurrenceError:
    return RecurrenceError(PATH, f"{name} field {item!r}: {rule}")


def cron_of(fields: Mapping[str, Any]) -> Cron | None:
    """The recurrence's `cron` (canonical field names), or None; with it, `frequency`,
    `interval` and `schedule` must be absent: the expression alone says when the job runs."""
    if "cron" not in fields:
        return None
    for other in ("frequency", "interval", "schedule"):
        if other in fields:
            raise RecurrenceError(
                f"recurrence.{other}",
                "must be absent with recurrence.cron (the expression alone says when the job runs)",
            )
    return read_cron(fields["cron"])


def cron_shortest_gap(expression: str) -> timedelta:
    """The shortest wall-clock gap between two runs of a cron expression (`shortest_gap`);
    raises `RecurrenceError` when it is invalid."""
    return timedelta(microseconds=shortest_gap(read_cron(expression)))
