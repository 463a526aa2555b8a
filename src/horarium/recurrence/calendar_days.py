"""The days a calendar excludes in a window of days, and why: what the dashboard's calendar
page lists (`GET …/calendars/{name}/excludedDates`, `POST …/calendars/{name}/upcoming`).

A day is read in one time zone (the calendar has none of its own: each job reads it in its
zone). Whole days come from `dates`, `weekends`, `holidays` and events or ranges that cover
the day; a day a range or a timed event covers in part lists those spans (UTC, clipped to the
day). Bounded: at most `MAX_DAYS` days a call; an iCalendar document's events are bounded by
`calendars.read_calendar`'s limits."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import holidays as holiday_tables

from horarium.recurrence.calendars import ICAL_LAST_YEAR, _instant, expanded
from horarium.recurrence.errors import RecurrenceError
from horarium.recurrence.parse import parse_when

MAX_DAYS = 366  # days one call lists

_Tagged = tuple[datetime, datetime, str, str]  # start, end (UTC, exclusive), kind, detail


def excluded_days(
    properties: Mapping[str, Any], zone: ZoneInfo, first: date, last: date
) -> list[dict[str, Any]]:
    """The days in [first, last) the calendar (its canonical `properties`) excludes in whole or
    in part, in `zone`: each `{"date", "wholeDay", "reasons": [{"kind", "detail"}],
    "spans": [{"start", "end"}]}` (spans only for a day excluded in part)."""
    if last <= first:
        raise RecurrenceError("to", f"{last.isoformat()} is not after from ({first.isoformat()})")
    if (last - first).days > MAX_DAYS:
        raise RecurrenceError("to", f"the window is longer than {MAX_DAYS} days")
    dates = set(properties.get("dates", ()))
    weekends = bool(properties.get("weekends", False))
    named = _holidays(properties.get("holidays"), first, last)
    timed = _timed(properties, zone, first, last)
    out: list[dict[str, Any]] = []
    day = first
    while day < last:
        reasons: list[dict[str, str]] = []
        if day.isoformat() in dates:
            reasons.append({"kind": "date", "detail": day.isoformat()})
        if weekends and day.weekday() >= 5:
            reasons.append({"kind": "weekend", "detail": day.strftime("%A")})
        if day in named:
            reasons.append({"kind": "holiday", "detail": named[day]})
        whole = bool(reasons)
        start = _midnight(day, zone)
        end = _midnight(day + timedelta(days=1), zone)
        spans: list[tuple[datetime, datetime]] = []
        for begin, finish, kind, detail in timed:
            if begin < end and finish > start:
                reasons.append({"kind": kind, "detail": detail})
                spans.append((max(begin, start), min(finish, end)))
        if not whole and spans:
            whole = _covers(spans, start, end)
        if reasons:
            entry: dict[str, Any] = {"date": day.isoformat(), "wholeDay": whole, "reasons": reasons}
            if not whole:
                entry["spans"] = [{"start": _text(s), "end": _text(e)} for s, e in sorted(spans)]
            out.append(entry)
        day += timedelta(days=1)
    return out


def _midnight(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, time()).replace(tzinfo=zone).astimezone(UTC)


def _holidays(spec: Any, first: date, last: date) -> dict[date, str]:
    if not isinstance(spec, Mapping):
        return {}
    years = list(range(first.year, last.year + 1))
    table = holiday_tables.country_holidays(
        spec["country"], subdiv=spec.get("subdivision"), years=years
    )
    return {d: str(name) for d, name in table.items() if first <= d < last}


def _timed(properties: Mapping[str, Any], zone: ZoneInfo, first: date, last: date) -> list[_Tagged]:
    """Ranges and iCalendar events overlapping the window, each with what to call it."""
    lo, hi = _midnight(first, zone), _midnight(last, zone)
    found: list[_Tagged] = []
    for r in properties.get("ranges", ()):
        start = parse_when(r["start"], zone, "start").instant
        end = parse_when(r["end"], zone, "end").instant
        if start < hi and end > lo:
            found.append((start, end, "range", f"{r['start']} – {r['end']}"))
    text = properties.get("ical")
    if isinstance(text, str) and first.year <= ICAL_LAST_YEAR:
        until = min(last, date(ICAL_LAST_YEAR + 1, 1, 1))
        for event in expanded(text, first - timedelta(days=1), until, "properties.ical"):
            begin = _instant(event.start, zone)
            finish = _instant(event.end, zone) if event.end is not None else begin
            if finish <= begin:
                finish = begin + timedelta(microseconds=1)
            if begin < hi and finish > lo:
                summary = str(event.get("SUMMARY") or event.get("UID") or "event")
                found.append((begin, finish, "event", summary))
    return found


def _covers(spans: list[tuple[datetime, datetime]], start: datetime, end: datetime) -> bool:
    reached = start
    for begin, finish in sorted(spans):
        if begin > reached:
            return False
        reached = max(reached, finish)
    return reached >= end


def _text(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
