"""A job's timing in plain English: the one describer of a recurrence (docs/recurrence.md,
"Describing a schedule"), used by the API's `scheduleDescription`, the CLI and the dashboard.

`describe(properties)` reads the same fields `plan` does (`startTime`, `recurrence`: Azure's
frequency, interval and schedule, or `cron`; `timeZone`, `excludeCalendars` / `onExcluded`,
`jitter`, `count`, `endTime`) and returns one line such as
``weekdays at 09:15 Europe/Paris, except business (weekends, holidays FR); moved to the next
business day``. It validates as `plan` does (`RecurrenceError`) but computes no execution: it
is cheap enough for every row of a listing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from horarium.recurrence.cron import Cron
from horarium.recurrence.excluding import RESOLVED, exclusion_mode, exclusion_names
from horarium.recurrence.parse import Rule, Schedule, read_rule

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)
NTH = ("", "first", "second", "third", "fourth", "fifth")
MAX_LISTED_TIMES = 6  # more times of day than this are told as a pattern
WEEKDAYS = frozenset(range(5))
WEEKEND = frozenset((5, 6))
EVERY_DAY = frozenset(range(7))
MOVES = {
    "NextBusinessDay": "moved to the next business day",
    "PreviousBusinessDay": "moved to the previous business day",
}


def describe(
    properties: Mapping[str, Any],
    *,
    created: datetime | None = None,
    calendars: Mapping[str, Any] | None = None,
) -> str:
    """The job's timing in one line. `created`: when its schedule was set (the anchor's time
    of day when there is no `startTime`); `calendars`: the properties of the calendars it may
    list, by name (default: the definition's `resolvedCalendars`; without them only their names
    are told). Raises `RecurrenceError` when the timing is invalid."""
    rule = read_rule(properties)
    anchor = _anchor(rule, created)
    if rule.frequency is None:
        if rule.start is None:
            return "once, at once"
        return f"once at {_moment(rule.start.wall)} {_zone(rule.zone)}"
    extras = [_main(rule, anchor)]
    extras += _exclusions(properties, calendars)
    if rule.jitter:
        extras.append(f"each run starts up to {_duration(rule.jitter)} late (jitter)")
    if rule.count is not None:
        extras.append("once only" if rule.count == 1 else f"{rule.count} times")
    if rule.end is not None:
        extras.append(f"until {_moment(rule.end.astimezone(rule.zone))}")
    described = extras[0]
    if len(extras) > 1:
        described += (", " if extras[1].startswith("except") else "; ") + "; ".join(extras[1:])
    return described


def _anchor(rule: Rule, created: datetime | None) -> datetime | None:
    """The anchor's wall-clock time in the job's zone (naive), or None when unknown."""
    if rule.start is not None:
        return rule.start.wall
    if created is not None:
        return created.astimezone(rule.zone).replace(tzinfo=None)
    return None


def _main(rule: Rule, anchor: datetime | None) -> str:
    zone = _zone(rule.zone)
    if rule.cron is not None:
        return _at(_cron_days(rule.cron), rule.cron.hours, rule.cron.minutes, 0, zone)
    frequency, n = rule.frequency, rule.interval
    schedule = rule.schedule or Schedule()
    if frequency == "Minute":
        return _elapsed("minute", n, anchor, zone)
    if frequency == "Hour":
        if schedule.minutes is None:
            return _elapsed("hour", n, anchor, zone)
        marks = _and(f":{m:02d}" for m in schedule.minutes)
        return f"{_every('hour', n)} at {marks} {zone}"
    minutes: tuple[int, ...] | None = schedule.minutes
    hours: tuple[int, ...] | None = schedule.hours
    if hours is None and minutes is None:
        if anchor is None:
            return f"{_days(rule, schedule, anchor)} at the time of day it was created ({zone})"
        hours, minutes, second = (anchor.hour,), (anchor.minute,), anchor.second
    else:
        second = 0 if minutes is not None else (anchor.second if anchor else 0)
        if hours is None:
            hours = tuple(range(24)) if minutes is not None else None
        if minutes is None:
            minutes = (anchor.minute,) if anchor else None
    days = _days(rule, schedule, anchor)
    if hours is None or minutes is None:
        listed = _and(f"{h:02d}" for h in hours or ())
        return f"{days} in the hours {listed}, at the minute it was created ({zone})"
    return _at(days, hours, minutes, second, zone)


def _elapsed(unit: str, n: int, anchor: datetime | None, zone: str) -> str:
    """`every 15 minutes` in elapsed time; its phase when it matters and is known."""
    every = _every(unit, n)
    if anchor is None or (unit == "minute" and n == 1):
        return every
    return f"{every} from {_moment(anchor)} {zone}"


def _every(unit: str, n: int) -> str:
    return f"every {unit}" if n == 1 else f"every {n} {unit}s"


def _at(days: str, hours: Iterable[int], minutes: Iterable[int], second: int, zone: str) -> str:
    """`weekdays at 09:15 Europe/Paris`, or `weekdays, every 15 minutes from 09:00 to 17:45
    UTC` when there are many times of day."""
    hs, ms = sorted(set(hours)), sorted(set(minutes))
    if len(hs) * len(ms) <= MAX_LISTED_TIMES:
        times = _and(_clock(h, m, second) for h in hs for m in ms)
        return f"{days} at {times} {zone}"
    pattern = f"{_minutes_pattern(ms)}{_hours_pattern(hs, ms)} {zone}"
    return pattern if days == "every day" else f"{days}, {pattern}"


def _minutes_pattern(ms: list[int]) -> str:
    step = _step(ms, 60)
    if step == 1:
        return "every minute"
    if step:
        return f"every {step} minutes"
    return f"every hour at {_and(f':{m:02d}' for m in ms)}"


def _hours_pattern(hs: list[int], ms: list[int]) -> str:
    if len(hs) == 24:
        return ""
    if hs == list(range(hs[0], hs[-1] + 1)):
        return f" from {_clock(hs[0], ms[0])} to {_clock(hs[-1], ms[-1])}"
    return f" in the hours {_and(f'{h:02d}' for h in hs)}"


def _step(values: list[int], size: int) -> int | None:
    """The step of `values` when they are 0, s, 2s, … covering the whole field (s divides
    `size`), else None."""
    if len(values) < 2 or values[0] != 0:
        return None
    step = values[1] - values[0]
    if size % step or values != list(range(0, size, step)):
        return None
    return step


def _days(rule: Rule, schedule: Schedule, anchor: datetime | None) -> str:
    frequency, n = rule.frequency, rule.interval
    if frequency == "Day":
        return _every("day", n)
    if frequency == "Week":
        if schedule.week_days is not None:
            days = frozenset(schedule.week_days)
        elif anchor is not None:
            days = frozenset((anchor.weekday(),))
        else:
            return f"{_every('week', n)} on the weekday it was created"
        named = _week_days(days)
        if n == 1:
            return named
        return f"{_every('week', n)} on {named}"
    if frequency == "Month":
        period = "every month" if n == 1 else f"every {n} months"
        picked = _month_picks(schedule)
        if not picked:
            if anchor is None:
                return f"{period} on the day it was created"
            day = f"the {_ordinal(anchor.day)} of {period}"
            if anchor.day > 28 and rule.schedule is None:  # .NET AddMonths clamps the day
                return f"{day} (the last day in shorter months)"
            return day
        every = all(o is None for _, o in schedule.occurrences or ())
        if n == 1 and schedule.month_days is None and every:
            return _week_days(frozenset(d for d, _ in schedule.occurrences or ()))
        return f"{_and(picked)} of {period}"
    # Year: the anchor's month and day
    if anchor is None:
        return "every year on the date it was created"
    return f"every year on {anchor.day} {MONTHS[anchor.month - 1]}"


def _month_picks(schedule: Schedule) -> list[str]:
    picks = [_month_day(d) for d in sorted(schedule.month_days or (), key=_day_order)]
    for day, n in schedule.occurrences or ():
        picks.append(f"every {DAYS[day]}" if n is None else f"the {_nth(n)} {DAYS[day]}")
    return picks


def _day_order(day: int) -> int:
    return day if day > 0 else 100 - day


def _month_day(day: int) -> str:
    if day > 0:
        return f"the {_ordinal(day)}"
    if day == -1:
        return "the last day"
    return f"the {_ordinal(-day)}-to-last day"


def _nth(n: int) -> str:
    if n > 0:
        return NTH[n]
    return "last" if n == -1 else f"{NTH[-n]}-to-last"


def _week_days(days: frozenset[int]) -> str:
    if days == EVERY_DAY:
        return "every day"
    if days == WEEKDAYS:
        return "weekdays"
    if days == WEEKEND:
        return "weekends"
    return _and(f"{DAYS[d]}s" for d in sorted(days))


def _cron_days(cron: Cron) -> str:
    """The days of a cron expression: `every day`, `weekdays`, `the 1st and the 15th`, …"""
    all_dom = cron.month_days == frozenset(range(1, 32)) and cron.dom_star
    dom: list[str] = [f"the {_ordinal(d)}" for d in sorted(cron.month_days)]
    dom += [_month_day(-1 - n) if n else "the last day" for n in sorted(cron.before_last)]
    dom += [f"the weekday nearest the {_ordinal(d)}" for d in sorted(cron.nearest)]
    if cron.last_weekday:
        dom.append("the last weekday")
    dow: list[str] = []
    plain = frozenset(cron.weekdays)
    if plain and plain != EVERY_DAY:
        dow.append(_week_days(plain))
    dow += [f"the last {DAYS[d]}" for d in sorted(cron.last_of)]
    dow += [f"the {NTH[k]} {DAYS[d]}" for d, k in sorted(cron.nth)]
    if cron.dow_star or not dow:
        days = "every day" if all_dom else f"{_and(dom)} of the month"
    elif cron.dom_star and not all_dom:  # both must match (Vixie cron's rule)
        days = f"{_and(dow)} that fall on the {_or(d.removeprefix('the ') for d in dom)}"
    elif cron.dom_star:
        days = _and(dow) + ("" if plain and not cron.last_of and not cron.nth else " of the month")
    else:  # both restricted: either matches
        days = f"{_and(dom)} of the month and {_and(dow)}"
    if cron.months != frozenset(range(1, 13)):
        days += f" in {_and(MONTHS[m - 1] for m in sorted(cron.months))}"
    return days


def _exclusions(properties: Mapping[str, Any], calendars: Mapping[str, Any] | None) -> list[str]:
    names = exclusion_names(properties)
    if not names:
        return []
    known = calendars if calendars is not None else properties.get(RESOLVED) or {}
    by_key = {str(k).lower(): v for k, v in known.items()} if isinstance(known, Mapping) else {}
    told = []
    for name in names:
        what = _calendar(by_key.get(name.lower()))
        told.append(f"{name} ({what})" if what else name)
    said = f"except {_and(told)}"
    move = MOVES.get(exclusion_mode(properties))
    return [said, move] if move else [said]


def _calendar(properties: Any) -> str:
    """`weekends, holidays US/NY, 3 dates`: what a calendar excludes, briefly (in the words of
    the CLI's and the dashboard's calendar lists)."""
    if not isinstance(properties, Mapping):
        return ""
    parts = []
    if properties.get("weekends"):
        parts.append("weekends")
    holidays = properties.get("holidays")
    if isinstance(holidays, Mapping) and holidays.get("country"):
        region = str(holidays["country"])
        if holidays.get("subdivision"):
            region += f"/{holidays['subdivision']}"
        parts.append(f"holidays {region}")
    for field, one, many in (("dates", "date", "dates"), ("ranges", "range", "ranges")):
        items = properties.get(field)
        if isinstance(items, list) and items:
            parts.append(f"{len(items)} {one if len(items) == 1 else many}")
    if properties.get("ical"):
        parts.append("iCalendar events")
    return ", ".join(parts) if parts else "nothing yet"


def _clock(hour: int, minute: int, second: int = 0) -> str:
    return f"{hour:02d}:{minute:02d}" + (f":{second:02d}" if second else "")


def _moment(wall: datetime) -> str:
    return f"{wall:%Y-%m-%d} {_clock(wall.hour, wall.minute, wall.second)}"


def _zone(zone: ZoneInfo) -> str:
    return zone.key or "UTC"


def _duration(span: timedelta) -> str:
    """`5 minutes`, `1 hour 30 minutes`, `45 seconds`."""
    seconds = int(span.total_seconds())
    if seconds == 0:
        return f"{span.microseconds // 1000} ms"
    parts = []
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= size:
            k, seconds = divmod(seconds, size)
            parts.append(f"{k} {unit}" + ("" if k == 1 else "s"))
    return " ".join(parts)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _and(items: Iterable[str]) -> str:
    return _joined(list(items), "and")


def _or(items: Iterable[str]) -> str:
    return _joined(list(items), "or")


def _joined(items: list[str], word: str) -> str:
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {word} {items[-1]}"
