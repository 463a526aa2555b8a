"""Validate and normalise a job's `startTime` / `recurrence` into a `Rule` (design doc §6).

Azure reads property names and enum values case-insensitively (`"Occurrence"` and
`"occurrence"`, `"week"` and `"Week"`), so this does too. Every error names the field by its
JSON path from the properties object and the rule it breaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from horarium.recurrence.cron import Cron, cron_of
from horarium.recurrence.errors import RecurrenceError, json_kind
from horarium.recurrence.jitter import read_jitter
from horarium.recurrence.zones import UTC_ZONE, find_zone

FREQUENCIES = ("Second", "Minute", "Hour", "Day", "Week", "Month", "Year")
DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MAX_INTERVAL = {
    **{"Second": 1000, "Minute": 1000, "Hour": 1000},
    **{"Day": 548, "Week": 78, "Month": 18, "Year": 1},
}
CRON = "Cron"  # Rule.frequency of a `cron` recurrence (it has no interval)
SCHEDULE_FIELDS = ("minutes", "hours", "weekDays", "monthDays", "monthlyOccurrences")
ALLOWED_SCHEDULE = {
    "Second": (),
    "Minute": (),
    "Hour": ("minutes",),
    "Day": ("hours", "minutes"),
    "Week": ("weekDays", "hours", "minutes"),
    "Month": ("monthDays", "monthlyOccurrences", "hours", "minutes"),
    "Year": ("hours", "minutes"),
}
RECURRENCE_FIELDS = (
    *("frequency", "interval", "count", "endTime", "schedule", "timeZone"),
    *("cron", "jitter"),
)
# Exclusion calendars: validated by `excluding.plan` (names, onExcluded) and `calendars`.
CALENDAR_FIELDS = ("excludeCalendars", "onExcluded")
OCCURRENCE_FIELDS = ("day", "occurrence")

# Instants outside this range are refused: no job runs before 1900, and the series needs room
# before year 10000 to be computed.
EARLIEST = datetime(1900, 1, 1)
LATEST = datetime(9000, 1, 1)


@dataclass(frozen=True, slots=True)
class Schedule:
    """A validated `recurrence.schedule`; None means the field was not given."""

    minutes: tuple[int, ...] | None = None
    hours: tuple[int, ...] | None = None
    week_days: tuple[int, ...] | None = None  # 0 = Monday … 6 = Sunday
    month_days: tuple[int, ...] | None = None  # −31..−1, 1..31
    occurrences: tuple[tuple[int, int | None], ...] | None = None  # (weekday, n or None = every)


@dataclass(frozen=True, slots=True)
class When:
    """A parsed date-time: the instant, and the wall-clock time in the job's zone it names."""

    instant: datetime  # aware UTC
    wall: datetime  # naive, in the zone; as written when the value had no offset


@dataclass(frozen=True, slots=True)
class Rule:
    """A job's validated timing: what `plan` compiles."""

    zone: ZoneInfo
    start: When | None
    frequency: str | None  # None: a one-time job
    interval: int = 1
    count: int | None = None
    end: datetime | None = None  # aware UTC, exclusive
    schedule: Schedule | None = None
    cron: Cron | None = None
    jitter: timedelta | None = None


def read_rule(properties: Mapping[str, Any]) -> Rule:
    """Validate the job `properties` (the Azure job JSON's ``"properties"``)."""
    if not isinstance(properties, Mapping):
        raise RecurrenceError("properties", f"must be an object, not {json_kind(properties)}")
    top = _fields(properties, "", ("startTime", "recurrence"), strict=False)
    recurrence = top.get("recurrence")
    if recurrence is None:
        return Rule(
            zone=UTC_ZONE, start=_when(top.get("startTime"), UTC_ZONE, "startTime"), frequency=None
        )
    if not isinstance(recurrence, Mapping):
        raise RecurrenceError("recurrence", f"must be an object, not {json_kind(recurrence)}")
    known = (*RECURRENCE_FIELDS, *CALENDAR_FIELDS)
    fields = _fields(recurrence, "recurrence", known, strict=True)
    zone = _zone(fields.get("timeZone"))
    start = _when(top.get("startTime"), zone, "startTime")
    cron = cron_of(fields)
    frequency = CRON if cron else _frequency(fields.get("frequency"))
    interval = _int(fields.get("interval", 1), "recurrence.interval")
    if interval < 1:
        raise RecurrenceError("recurrence.interval", f"{interval} is less than 1")
    if not cron and interval > MAX_INTERVAL[frequency]:
        raise RecurrenceError(
            "recurrence.interval",
            f"{interval} is more than {MAX_INTERVAL[frequency]}, the most for {frequency}",
        )
    count = None
    if "count" in fields:
        count = _int(fields["count"], "recurrence.count")
        if count < 1:
            raise RecurrenceError("recurrence.count", f"{count} is less than 1")
    end_when = _when(fields.get("endTime"), zone, "recurrence.endTime")
    schedule = None
    if "schedule" in fields:
        schedule = _schedule(fields["schedule"], frequency)
    return Rule(
        zone=zone,
        start=start,
        frequency=frequency,
        interval=interval,
        count=count,
        end=end_when.instant if end_when else None,
        schedule=schedule,
        cron=cron,
        jitter=read_jitter(fields.get("jitter")),
    )


def parse_when(value: Any, zone: ZoneInfo, field: str) -> When:
    """Parse an ISO 8601 date, date-time or aware datetime read in `zone` (see `When`)."""
    if isinstance(value, str):
        text = value.strip().upper()
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise RecurrenceError(field, f"{value!r} is not an ISO 8601 date-time") from None
    elif isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    else:
        raise RecurrenceError(
            field, f"must be an ISO 8601 date-time string, not {json_kind(value)}"
        )
    if parsed.tzinfo is not None and parsed.utcoffset() is not None:
        try:
            instant = parsed.astimezone(UTC)
            wall = instant.astimezone(zone).replace(tzinfo=None, fold=0)
        except OverflowError:
            raise RecurrenceError(field, f"{value!s} is out of range") from None
    else:
        wall = parsed.replace(tzinfo=None, fold=0)
        instant = wall.replace(tzinfo=zone).astimezone(UTC)  # fold=0: design doc §4
    if not EARLIEST <= wall < LATEST:
        raise RecurrenceError(
            field, f"{value!s} is outside {EARLIEST.year}-01-01..{LATEST.year}-01-01"
        )
    return When(instant=instant, wall=wall)


def _when(value: Any, zone: ZoneInfo, field: str) -> When | None:
    return None if value is None else parse_when(value, zone, field)


def _zone(value: Any) -> ZoneInfo:
    if value is None:
        return UTC_ZONE
    if not isinstance(value, str):
        raise RecurrenceError("recurrence.timeZone", f"must be a string, not {json_kind(value)}")
    zone = find_zone(value)
    if zone is None:
        raise RecurrenceError(
            "recurrence.timeZone", f"{value!r} is not a known IANA or Windows time zone"
        )
    return zone


def _frequency(value: Any) -> str:
    if value is None:
        raise RecurrenceError("recurrence.frequency", "is required")
    if isinstance(value, str):
        for name in FREQUENCIES:
            if value.strip().lower() == name.lower():
                return name
    raise RecurrenceError(
        "recurrence.frequency", f"{value!r} is not one of {', '.join(FREQUENCIES)}"
    )


def _schedule(value: Any, frequency: str) -> Schedule:
    path = "recurrence.schedule"
    if not isinstance(value, Mapping):
        raise RecurrenceError(path, f"must be an object, not {json_kind(value)}")
    fields = _fields(value, path, SCHEDULE_FIELDS, strict=True)
    if not fields:
        raise RecurrenceError(path, "must not be empty (give at least one schedule field)")
    allowed = ALLOWED_SCHEDULE[frequency]
    for name in fields:
        if name not in allowed:
            also = f"allowed: {', '.join(allowed)}" if allowed else "no schedule is allowed"
            raise RecurrenceError(
                f"{path}.{name}", f"is not allowed with frequency {frequency} ({also})"
            )
    minutes = _numbers(fields.get("minutes"), f"{path}.minutes", range(0, 60), "0..59")
    hours = _numbers(fields.get("hours"), f"{path}.hours", range(0, 24), "0..23")
    month_days = _numbers(
        fields.get("monthDays"),
        f"{path}.monthDays",
        [*range(-31, 0), *range(1, 32)],
        "-31..-1 or 1..31",
    )
    week_days = None
    if "weekDays" in fields:
        week_days = _week_days(fields["weekDays"], f"{path}.weekDays")
    occurrences = None
    if "monthlyOccurrences" in fields:
        occurrences = _occurrences(fields["monthlyOccurrences"], f"{path}.monthlyOccurrences")
    return Schedule(
        minutes=minutes,
        hours=hours,
        week_days=week_days,
        month_days=month_days,
        occurrences=occurrences,
    )


def _numbers(value: Any, path: str, valid: range | list[int], shown: str) -> tuple[int, ...] | None:
    """A list of integers from `valid`; repeats are harmless and dropped."""
    if value is None:
        return None
    items = _list(value, path)
    numbers: set[int] = set()
    for i, item in enumerate(items):
        number = _int(item, f"{path}[{i}]")
        if number not in valid:
            raise RecurrenceError(f"{path}[{i}]", f"{number} is not in {shown}")
        numbers.add(number)
    return tuple(sorted(numbers))


def _week_days(value: Any, path: str) -> tuple[int, ...]:
    items = _list(value, path)
    if len(items) > 7:
        raise RecurrenceError(path, f"{len(items)} days given, at most 7")
    seen: dict[int, int] = {}
    for i, item in enumerate(items):
        day = _day(item, f"{path}[{i}]")
        if day in seen:
            raise RecurrenceError(f"{path}[{i}]", f"{item!r} repeats {path}[{seen[day]}]")
        seen[day] = i
    return tuple(sorted(seen))


def _occurrences(value: Any, path: str) -> tuple[tuple[int, int | None], ...]:
    items = _list(value, path)
    found: set[tuple[int, int | None]] = set()
    for i, item in enumerate(items):
        here = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            raise RecurrenceError(here, f"must be an object, not {json_kind(item)}")
        fields = _fields(item, here, OCCURRENCE_FIELDS, strict=True)
        if "day" not in fields:
            raise RecurrenceError(f"{here}.day", "is required")
        day = _day(fields["day"], f"{here}.day")
        occurrence = None
        if "occurrence" in fields:
            occurrence = _int(fields["occurrence"], f"{here}.occurrence")
            if not (1 <= occurrence <= 5 or -5 <= occurrence <= -1):
                raise RecurrenceError(
                    f"{here}.occurrence", f"{occurrence} is not in -5..-1 or 1..5"
                )
        found.add((day, occurrence))
    return tuple(sorted(found, key=lambda pair: (pair[0], pair[1] or 0)))


def _day(value: Any, path: str) -> int:
    if isinstance(value, str):
        key = value.strip().lower()
        for number, name in enumerate(DAY_NAMES):
            if key == name.lower():
                return number
    raise RecurrenceError(path, f"{value!r} is not a day name (Monday..Sunday)")


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise RecurrenceError(path, f"must be a list, not {json_kind(value)}")
    if not value:
        raise RecurrenceError(path, "must not be empty (leave the field out instead)")
    return list(value)


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool):
        raise RecurrenceError(path, f"must be an integer, not {json_kind(value)}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise RecurrenceError(path, f"{value!r} is not an integer")


def _fields(
    obj: Mapping[str, Any], path: str, known: tuple[str, ...], *, strict: bool
) -> dict[str, Any]:
    """The object's known fields by canonical name, matched case-insensitively; nulls dropped.

    `strict`: an unknown field is an error (for `recurrence`, `schedule` and occurrences).
    """
    canonical = {name.lower(): name for name in known}
    found: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in obj.items():
        name = canonical.get(str(key).lower())
        where = f"{path}.{key}" if path else str(key)
        if name is None:
            if strict:
                raise RecurrenceError(where, f"is not a known field (known: {', '.join(known)})")
            continue
        if name in spelled and found.get(name) != value:
            raise RecurrenceError(where, f"conflicts with {spelled[name]!r} (same field)")
        spelled[name] = str(key)
        if value is not None:
            found[name] = value
    return found
