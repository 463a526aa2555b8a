"""Exclusion calendars: validating a calendar's properties, and reading one in a job's zone.

A calendar's `properties` (docs/recurrence.md, "Exclusion calendars"):
- `dates`: days (``YYYY-MM-DD``) excluded whole;
- `ranges`: ``{"start", "end"}`` date-times, `end` exclusive; without an offset they are read on
  the job's wall clock, a date alone is midnight;
- `holidays`: ``{"country": "US", "subdivision": "NY"}``, the public holidays of the `holidays`
  package, excluded whole;
- `ical`: an iCalendar document; its events (recurring ones expanded) are excluded: an all-day
  event its days, a timed event its time (floating times on the job's wall clock);
- `weekends`: true excludes Saturdays and Sundays.

`read_calendar` validates and returns the canonical properties (what is stored); `Zoned` answers
"is this instant excluded, by which calendar, until when" for one job's zone.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

import holidays as holiday_tables
import icalendar
import recurring_ical_events

from horarium.recurrence import ical_text, ical_work
from horarium.recurrence.errors import RecurrenceError, json_kind
from horarium.recurrence.parse import parse_when
from horarium.recurrence.zones import UTC_ZONE

CALENDAR_FIELDS = ("dates", "ranges", "holidays", "ical", "weekends")
HOLIDAY_FIELDS = ("country", "subdivision")
RANGE_FIELDS = ("start", "end")
MAX_ITEMS = 1000  # dates, ranges
MAX_ICAL_BYTES = 1_000_000
MAX_ICAL_EVENTS = 1000  # events (VEVENT) in a document
# Occurrences a document's events may have in one year, an upper bound read from their rules.
MAX_ICAL_PER_YEAR = 1000
ICAL_REPEATS = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")  # the FREQ values accepted
# dateutil's work (`ical_work` steps) to expand a document's events up to the end of
# ICAL_LAST_YEAR, from their starts: the most any one expansion of the document costs.
MAX_ICAL_STEPS = 2_000_000
ICAL_LAST_YEAR = 2100  # iCalendar events exclude nothing after this year
_ICAL_CACHE = 32  # parsed documents kept
_SPANS_CACHE = 256  # (document, year, zone) expansions kept

Span = tuple[datetime, datetime]  # aware UTC, end exclusive


def read_calendar(
    properties: Any, path: str = "properties", *, to_the_end: bool = True
) -> dict[str, Any]:
    """Validate a calendar's `properties`; the canonical form (field names as documented,
    dates sorted and unique, the holiday country upper-case). Raises `RecurrenceError` naming
    the field (``properties.ranges[2].end``). `to_the_end`: also expand an iCalendar document
    up to the end of `ICAL_LAST_YEAR`, what storing a calendar checks, so that no later
    expansion of it passes `MAX_ICAL_STEPS`; a job's compile reads the calendars it lists
    without it (each of their expansions is bounded on its own)."""
    if not isinstance(properties, Mapping):
        raise RecurrenceError(path, f"must be an object, not {json_kind(properties)}")
    fields = _fields(properties, path, CALENDAR_FIELDS)
    out: dict[str, Any] = {}
    if "dates" in fields:
        out["dates"] = _dates(fields["dates"], f"{path}.dates")
    if "ranges" in fields:
        out["ranges"] = _ranges(fields["ranges"], f"{path}.ranges")
    if "holidays" in fields:
        out["holidays"] = _holidays(fields["holidays"], f"{path}.holidays")
    if "ical" in fields:
        out["ical"] = _ical(fields["ical"], f"{path}.ical", to_the_end)
    if "weekends" in fields:
        if not isinstance(fields["weekends"], bool):
            raise RecurrenceError(
                f"{path}.weekends", f"must be true or false, not {json_kind(fields['weekends'])}"
            )
        out["weekends"] = fields["weekends"]
    return out


def _dates(value: Any, path: str) -> list[str]:
    items = _list(value, path)
    found: set[date] = set()
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise RecurrenceError(
                f"{path}[{i}]", f"must be a YYYY-MM-DD string, not {json_kind(item)}"
            )
        try:
            found.add(date.fromisoformat(item.strip()))
        except ValueError:
            raise RecurrenceError(f"{path}[{i}]", f"{item!r} is not a YYYY-MM-DD date") from None
    return [d.isoformat() for d in sorted(found)]


def _ranges(value: Any, path: str) -> list[dict[str, str]]:
    items = _list(value, path)
    out: list[dict[str, str]] = []
    for i, item in enumerate(items):
        here = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            raise RecurrenceError(
                here, f"must be an object with start and end, not {json_kind(item)}"
            )
        fields = _fields(item, here, RANGE_FIELDS)
        for name in RANGE_FIELDS:
            if name not in fields:
                raise RecurrenceError(f"{here}.{name}", "is required")
            if not isinstance(fields[name], str):
                raise RecurrenceError(
                    f"{here}.{name}",
                    f"must be an ISO 8601 date-time string, not {json_kind(fields[name])}",
                )
        start = parse_when(fields["start"], UTC_ZONE, f"{here}.start")
        end = parse_when(fields["end"], UTC_ZONE, f"{here}.end")
        if end.instant <= start.instant:  # compared in UTC; each job reads them in its zone
            raise RecurrenceError(f"{here}.end", "must be after start")
        out.append({"start": fields["start"].strip(), "end": fields["end"].strip()})
    return out


def _holidays(value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise RecurrenceError(path, f"must be an object with a country, not {json_kind(value)}")
    fields = _fields(value, path, HOLIDAY_FIELDS)
    country = fields.get("country")
    if not isinstance(country, str) or not country.strip():
        raise RecurrenceError(f"{path}.country", "is required: an ISO 3166 country code")
    subdivision = fields.get("subdivision")
    if subdivision is not None and not isinstance(subdivision, str):
        raise RecurrenceError(
            f"{path}.subdivision", f"must be a string, not {json_kind(subdivision)}"
        )
    out = {"country": country.strip().upper()}
    spellings: list[str | None] = [None]
    if subdivision is not None and subdivision.strip():
        spellings = list(dict.fromkeys([subdivision.strip(), subdivision.strip().upper()]))
    error: NotImplementedError | None = None
    for spelling in spellings:  # as given, then upper-case (most codes are: "NY", "BY")
        try:
            holiday_tables.country_holidays(out["country"], subdiv=spelling)
        except NotImplementedError as refused:
            error = error or refused
            continue
        if spelling is not None:
            out["subdivision"] = spelling
        return out
    field = "subdivision" if "subdivision" in str(error) else "country"
    raise RecurrenceError(f"{path}.{field}", f"not known to the holidays package ({error})")


def _ical(value: Any, path: str, to_the_end: bool) -> str:
    if not isinstance(value, str):
        raise RecurrenceError(
            path, f"must be an iCalendar document as a string, not {json_kind(value)}"
        )
    size = len(value.encode())
    if size > MAX_ICAL_BYTES:
        raise RecurrenceError(path, f"is {size} bytes; at most {MAX_ICAL_BYTES} (1 MB)")
    problem = _ical_problem(value, to_the_end)
    if problem is not None:
        raise RecurrenceError(path + problem[0], problem[1])
    return value


@lru_cache(maxsize=_ICAL_CACHE)
def _ical_problem(text: str, to_the_end: bool) -> tuple[str, str] | None:
    """Why the document is refused (the end of the field's path, and the rule), or None;
    worked out once per document text (a stored calendar is read again at every compile)."""
    size = ical_text.parts(ical_text.lines(text))
    if size > ical_text.MAX_PARTS:
        return "", (
            f"has {size} parts (content lines, parameters and list values); at most "
            f"{ical_text.MAX_PARTS}, which bounds the cost of reading it"
        )
    try:
        calendar = _parsed(text)
    except Exception as error:  # the library raises many kinds for a bad document
        return "", f"not a valid iCalendar document ({error})"
    try:
        _check_bounds(calendar, "")
    except RecurrenceError as refused:
        return refused.field, refused.rule
    unknown = ical_text.unknown_zone(calendar)
    if unknown is not None:
        event, uid, tzid = unknown
        return (
            f": event {event} (UID {uid})",
            f"TZID {tzid!r} names no time zone: use an IANA name (Europe/Berlin) or a Windows "
            "name (W. Europe Standard Time); the document's VTIMEZONE definitions are not read",
        )
    # Either as far as any later expansion goes, or a day that reads every rule (a rule that
    # never matches still passes the limit looking for its first occurrence).
    last = date(ICAL_LAST_YEAR, 12, 31) if to_the_end else date(2000, 1, 1)
    try:
        expanded(text, last, last + timedelta(days=1), "")
    except RecurrenceError as refused:
        return refused.field, refused.rule
    except Exception as error:
        return "", f"not a valid iCalendar document ({error})"
    return None


@lru_cache(maxsize=_ICAL_CACHE)
def _parsed(text: str) -> icalendar.Calendar:
    """The document, parsed once per document text (documents are immutable), its time zones
    read by name (`ical_text`)."""
    calendar = icalendar.Calendar.from_ical(ical_text.without_time_zones(ical_text.lines(text)))
    if not isinstance(calendar, icalendar.Calendar) or calendar.name != "VCALENDAR":
        raise ValueError("the document is not a VCALENDAR")
    return calendar


def expanded(text: str, first: date, end: date, path: str) -> list[Any]:
    """The document's event occurrences that overlap [first, end) (`end` at most the first
    day after `ICAL_LAST_YEAR`), found in at most `MAX_ICAL_STEPS` steps of dateutil's work; past
    them a `RecurrenceError` at `path`. Expanding starts from each event's start, so a window
    ending later costs at least as much: what `_ical_problem` checks costs the most."""
    try:
        with ical_work.limited(MAX_ICAL_STEPS):
            return list(recurring_ical_events.of(_parsed(text)).between(first, end))
    except ical_work.TooCostly as costly:
        raise RecurrenceError(
            path,
            f"its recurring events take more than {MAX_ICAL_STEPS} steps to expand up to the "
            f"end of {ICAL_LAST_YEAR} (the limit; passed in {costly.rule}): a rule that never "
            "or seldom matches (such as BYMONTH=2;BYMONTHDAY=31), or events that start long "
            "before they matter (start them later, or repeat them less often)",
        ) from None


def _check_bounds(calendar: icalendar.Calendar, path: str) -> None:
    """Refuse a document whose expansion would be costly, from its rules alone (before any
    expansion): more than `MAX_ICAL_EVENTS` events, a rule repeating more often than daily,
    or more than `MAX_ICAL_PER_YEAR` occurrences a year in all."""
    events = calendar.walk("VEVENT")
    if len(events) > MAX_ICAL_EVENTS:
        raise RecurrenceError(path, f"has {len(events)} events; at most {MAX_ICAL_EVENTS}")
    occurrences = 0
    for i, event in enumerate(events):
        where = f"{path}: event {i + 1} (UID {event.get('UID', '?')})"
        occurrences += _yearly_bound(event, where)
        if occurrences > MAX_ICAL_PER_YEAR:
            raise RecurrenceError(
                path,
                f"its events may occur more than {MAX_ICAL_PER_YEAR} times a year (the limit, "
                f"counted from their rules up to event {i + 1})",
            )


def _yearly_bound(event: Any, where: str) -> int:
    """At most how many times `event` occurs in one year."""
    found = len(_values(event.get("RDATE"), lambda v: list(getattr(v, "dts", [v]))))
    rules = _values(event.get("RRULE"), lambda v: [v])
    if not rules:
        return found + 1
    return found + sum(_rule_bound(rule, where) for rule in rules)


def _rule_bound(rule: Mapping[str, list[Any]], where: str) -> int:
    """At most how many times an RRULE occurs in one year: its periods in a year (over its
    INTERVAL) times the days each period can hold, times the times each day can hold."""
    freq = str((rule.get("FREQ") or ["?"])[0]).upper()
    if freq not in ICAL_REPEATS:
        raise RecurrenceError(
            where, f"repeats {freq}; events may repeat {', '.join(ICAL_REPEATS)} only"
        )
    try:
        interval = max(1, int((rule.get("INTERVAL") or [1])[0]))
    except (TypeError, ValueError):
        raise RecurrenceError(where, "INTERVAL must be a whole number") from None

    def n(key: str) -> int:
        return len(rule.get(key) or ())

    periods, per_period = {
        "DAILY": (366, 1),
        "WEEKLY": (54, max(1, n("BYDAY"))),
        "MONTHLY": (12, min(31, max(1, n("BYMONTHDAY"), 5 * n("BYDAY")))),
        "YEARLY": (1, _yearly_days(n)),
    }[freq]
    periods = -(-periods // interval)
    days = min(366, periods * per_period)
    times = max(1, n("BYHOUR")) * max(1, n("BYMINUTE")) * max(1, n("BYSECOND"))
    return days * times


def _yearly_days(n: Callable[[str], int]) -> int:
    if any(n(key) for key in ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY")):
        return 366
    return max(1, n("BYMONTH"))


def _values(value: Any, items: Any) -> list[Any]:
    """A property that may repeat (a list) or not, as a flat list of `items(each)`."""
    if value is None:
        return []
    found: list[Any] = []
    for each in value if isinstance(value, list) else [value]:
        found.extend(items(each))
    return found


@lru_cache(maxsize=256)
def _holiday_dates(country: str, subdivision: str | None, year: int) -> frozenset[date]:
    return frozenset(holiday_tables.country_holidays(country, subdiv=subdivision, years=year))


# ---------------------------------------------------------------------------------------------
# A calendar read in one job's zone


@dataclass(frozen=True, slots=True)
class Exclusion:
    """Why an instant is excluded: the calendar, and since and until when (at least) the
    exclusion lasts."""

    calendar: str
    since: datetime  # aware UTC
    until: datetime  # aware UTC, exclusive


class Zoned:
    """One calendar, its wall-clock values read in `zone`."""

    def __init__(self, name: str, properties: Mapping[str, Any], zone: ZoneInfo) -> None:
        self.name = name
        self.zone = zone
        self._dates = frozenset(date.fromisoformat(d) for d in properties.get("dates", ()))
        self._weekends = bool(properties.get("weekends", False))
        spec = properties.get("holidays")
        self._holidays: tuple[str, str | None] | None = None
        if spec is not None:
            self._holidays = (spec["country"], spec.get("subdivision"))
        self._ranges = _merged(
            [
                (
                    parse_when(r["start"], zone, "start").instant,
                    parse_when(r["end"], zone, "end").instant,
                )
                for r in properties.get("ranges", ())
            ]
        )
        self._ical: str | None = properties.get("ical")
        self._years: dict[int, list[Span]] = {}  # the events' spans by year, once expanded

    def whole_day(self, day: date) -> bool:
        """The whole day is excluded (dates, weekends, holidays)."""
        if day in self._dates or (self._weekends and day.weekday() >= 5):
            return True
        if self._holidays is not None:
            return day in _holiday_dates(*self._holidays, day.year)
        return False

    def spans(self, start: datetime, end: datetime) -> list[Span]:
        """Timed exclusions (ranges, iCalendar events) that overlap [start, end)."""
        found = _overlapping(self._ranges, start, end)
        if self._ical is not None:
            first = start.astimezone(self.zone).year
            last = min(end.astimezone(self.zone).year, ICAL_LAST_YEAR)
            for year in range(first, last + 1):
                found.extend(_overlapping(self._event_spans(self._ical, year), start, end))
        return found

    def _event_spans(self, text: str, year: int) -> list[Span]:
        """`_event_spans` of the year, kept as long as this calendar is (a compiled plan holds
        it; the shared cache may have let the year go)."""
        spans = self._years.get(year)
        if spans is None:
            try:
                spans = self._years[year] = _event_spans(text, year, self.zone)
            except RecurrenceError as refused:  # a document not checked to the end
                raise RecurrenceError(f"calendars.{self.name}.ical", refused.rule) from None
        return spans


@lru_cache(maxsize=_SPANS_CACHE)
def _event_spans(text: str, year: int, zone: ZoneInfo) -> list[Span]:
    """The year's events as merged spans: all-day events from local midnight to local
    midnight, timed ones as they are (floating times in `zone`; no end: their start only)."""
    spans: list[Span] = []
    for event in expanded(text, date(year, 1, 1), date(year + 1, 1, 1), "ical"):
        start, end = event.start, event.end
        begin = _instant(start, zone)
        finish = _instant(end, zone) if end is not None else begin
        if finish <= begin:
            finish = begin + timedelta(microseconds=1)
        spans.append((begin, finish))
    return _merged(spans)


def _instant(value: date | datetime, zone: ZoneInfo) -> datetime:
    if not isinstance(value, datetime):
        value = datetime.combine(value, time())
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=zone, fold=0)
    return value.astimezone(UTC)


def _merged(spans: list[Span]) -> list[Span]:
    """Sorted, overlapping or touching spans joined."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _overlapping(spans: list[Span], start: datetime, end: datetime) -> list[Span]:
    """The merged `spans` that overlap [start, end)."""
    found: list[Span] = []
    i = max(0, bisect_right(spans, (start, start)) - 1)
    while i < len(spans) and spans[i][0] < end:
        if spans[i][1] > start:
            found.append(spans[i])
        i += 1
    return found


class Calendars:
    """The calendars a job lists, read in its zone: which excludes an instant, and until when."""

    def __init__(self, calendars: list[Zoned], zone: ZoneInfo) -> None:
        self.calendars = calendars
        self.zone = zone

    def day_start(self, day: date) -> datetime:
        """The first instant of the local `day`."""
        return datetime.combine(day, time()).replace(tzinfo=self.zone).astimezone(UTC)

    def excluded(self, instant: datetime, day: date) -> Exclusion | None:
        """The first listed calendar that excludes `instant` (on local `day`), or None."""
        for calendar in self.calendars:
            if calendar.whole_day(day):
                first, last = day, day
                while calendar.whole_day(first - _ONE_DAY) and day - first < _LONGEST:
                    first -= _ONE_DAY
                while calendar.whole_day(last + _ONE_DAY) and last - day < _LONGEST:
                    last += _ONE_DAY
                return Exclusion(
                    calendar.name, self.day_start(first), self.day_start(last + _ONE_DAY)
                )
            for start, end in calendar.spans(instant, instant + _ONE_US):
                if start <= instant < end:
                    return Exclusion(calendar.name, start, end)
        return None

    def free(self, day: date) -> bool:
        """No listed calendar excludes any part of the local `day`."""
        start, end = self.day_start(day), self.day_start(day + _ONE_DAY)
        return not any(c.whole_day(day) or c.spans(start, end) for c in self.calendars)


def _fields(obj: Mapping[str, Any], path: str, known: tuple[str, ...]) -> dict[str, Any]:
    """Known fields by canonical name, matched case-insensitively; nulls dropped; an unknown
    field is an error."""
    canonical = {name.lower(): name for name in known}
    found: dict[str, Any] = {}
    for key, value in obj.items():
        name = canonical.get(str(key).lower())
        if name is None:
            raise RecurrenceError(
                f"{path}.{key}", f"is not a known field (known: {', '.join(known)})"
            )
        if value is not None:
            found[name] = value
    return found


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise RecurrenceError(path, f"must be a list, not {json_kind(value)}")
    if len(value) > MAX_ITEMS:
        raise RecurrenceError(path, f"{len(value)} items given, at most {MAX_ITEMS}")
    return list(value)


_ONE_DAY = timedelta(days=1)
_ONE_US = timedelta(microseconds=1)
_LONGEST = timedelta(days=400)
