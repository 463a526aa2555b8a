"""What a calendar excludes and does, for the dashboard's calendar page and form (Horarium
extensions, docs/api.md):

- `GET …/calendars/{name}/excludedDates?from&to&timeZone`: the days the stored calendar excludes
  in a window of at most `MAX_DAYS` days, and why (a holiday's name, an event's summary);
- `POST …/calendars/{name}/upcoming?from&to&timeZone` with a calendar body (validated like a
  PUT, nothing stored): the same days for that body, and, for every job of the collection that
  lists the calendar, the executions it would skip or move in a window of at most
  `MAX_PREVIEW` (bounded like the collection's timeline: `windows.MAX_EXECUTIONS` entries), each
  marked `new` or `same` against the stored calendar, plus those the stored calendar skips or
  moves that the body no longer does (`released`).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api.calendar_ops import require as require_calendar
from horarium.api.collection_ops import require as require_collection
from horarium.api.collection_upcoming import (
    TIMING_KEYS,
    collection_hold,
    job_timing,
    read_window,
)
from horarium.api.offload import evaluate
from horarium.api.windows import JobTiming, window
from horarium.model import datetimes
from horarium.model.calendar import check_calendar_name, parse_calendar
from horarium.model.errors import BadRequest
from horarium.model.keys import lookup
from horarium.model.names import CollectionName
from horarium.recurrence import (
    RESOLVED,
    RecurrenceError,
    excluded_days,
    exclusion_names,
)
from horarium.recurrence.calendar_days import MAX_DAYS
from horarium.recurrence.zones import UTC_ZONE, find_zone
from horarium.store.resources import calendars, jobs
from horarium.store.resources.jobs import JobRecord

DEFAULT_DAYS = 92  # excludedDates without `to`
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(9000, 1, 1)  # as the recurrence rules' instants
DEFAULT_PREVIEW = timedelta(days=31)  # upcoming without `to`
MAX_PREVIEW = timedelta(days=92)


def read_zone(value: str | None) -> ZoneInfo:
    """`timeZone`: an IANA or Windows name (default UTC); 400 naming it otherwise."""
    if value is None or not value.strip():
        return UTC_ZONE
    zone = find_zone(value)
    if zone is None:
        raise BadRequest(f"timeZone: {value!r} is not a known time zone")
    return zone


def read_days(
    start: str | None, end: str | None, zone: ZoneInfo, now: datetime
) -> tuple[date, date]:
    """`from` (a date, default today in `zone`) and `to` (exclusive, default `DEFAULT_DAYS`
    later), at most `MAX_DAYS` apart."""
    first = _date(start, "from") if start is not None else now.astimezone(zone).date()
    last = _date(end, "to") if end is not None else first + timedelta(days=DEFAULT_DAYS)
    if last <= first:
        raise BadRequest(f"to: {last.isoformat()} is not after from ({first.isoformat()})")
    if (last - first).days > MAX_DAYS:
        raise BadRequest(
            f"to: the window from {first.isoformat()} to {last.isoformat()} is longer than"
            f" {MAX_DAYS} days, the most one request lists"
        )
    return first, last


def read_preview_window(
    start: str | None, end: str | None, now: datetime
) -> tuple[datetime, datetime]:
    """`from` (default now) and `to` (exclusive, default 31 days later), at most 92 days
    apart: ISO 8601, UTC without an offset."""
    return read_window(start, end, now, DEFAULT_PREVIEW, MAX_PREVIEW)


async def excluded_dates(
    conn: AsyncConnection,
    name: CollectionName,
    calendar_name: str,
    first: date,
    last: date,
    zone: ZoneInfo,
) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    calendar = await require_calendar(conn, collection, calendar_name)
    value = await _days(calendar.properties, zone, first, last)
    return {
        "calendar": calendar.name,
        "from": first.isoformat(),
        "to": last.isoformat(),
        "timeZone": zone.key,
        "value": value,
    }


async def preview(
    conn: AsyncConnection,
    name: CollectionName,
    calendar_name: str,
    raw: Any,
    start: datetime,
    end: datetime,
    zone: ZoneInfo,
    now: datetime,
) -> dict[str, Any]:
    check_calendar_name(calendar_name)
    properties = await evaluate(_with_ical(raw), parse_calendar, raw, calendar_name)
    collection = await require_collection(conn, name)
    existing = await calendars.get(conn, collection.id, calendar_name)
    known = existing.name if existing is not None else calendar_name
    users = [j for j in await jobs.all_of(conn, collection.id) if _lists(j, calendar_name)]
    hold = collection_hold(collection)
    costly = bool(users)
    after = [_timing(j, known, properties) for j in users]
    before = [_timing(j, None, None) for j in users]
    proposed = await evaluate(costly, window, after, hold, start, end, now)
    stored = await evaluate(costly, window, before, hold, start, end, now)
    first = start.astimezone(zone).date()
    last = min(end.astimezone(zone).date() + timedelta(days=1), first + timedelta(days=MAX_DAYS))
    return {
        "calendar": known,
        "from": _text(start),
        "to": _text(end),
        "timeZone": zone.key,
        "collectionState": collection.state,
        "excludedDates": await _days(properties, zone, first, last),
        "jobs": [_compared(a, b, calendar_name) for a, b in zip(proposed, stored, strict=True)],
    }


async def _days(
    properties: dict[str, Any], zone: ZoneInfo, first: date, last: date
) -> list[dict[str, Any]]:
    try:
        return await evaluate("ical" in properties, excluded_days, properties, zone, first, last)
    except RecurrenceError as error:
        raise BadRequest(str(error)) from error


def _compared(after: dict[str, Any], before: dict[str, Any], calendar: str) -> dict[str, Any]:
    """A job's entry: the executions the proposed calendar skips or moves (`change`: `new` or
    `same` against the stored one) and those only the stored one did (`released`)."""
    mine = calendar.lower()
    proposed = [e for e in after.pop("executions") if _by(e, mine)]
    stored = [e for e in before.get("executions", ()) if _by(e, mine)]
    was = {_key(e) for e in stored}
    now = {_key(e) for e in proposed}
    listed = [{**e, "change": "same" if _key(e) in was else "new"} for e in proposed]
    listed += [{**e, "change": "released"} for e in stored if _key(e) not in now]
    listed.sort(key=lambda e: (e["scheduledExecutionTime"], e["executionTime"]))
    return {**after, "executions": listed}


def _by(entry: dict[str, Any], calendar: str) -> bool:
    found = entry.get("skippedByCalendar") or entry.get("movedByCalendar")
    return isinstance(found, str) and found.lower() == calendar


def _key(entry: dict[str, Any]) -> tuple[Any, ...]:
    if "skippedByCalendar" in entry:
        return ("skipped", entry["executionTime"])
    return ("moved", entry["executionTime"], tuple(entry.get("scheduledExecutionTimes", ())))


def _timing(job: JobRecord, known: str | None, properties: dict[str, Any] | None) -> JobTiming:
    """`job`'s timing, the calendar `known` read as `properties` when both are given."""
    if known is None or properties is None:
        return job_timing(job)
    definition = {k: job.definition[k] for k in TIMING_KEYS if k in job.definition}
    resolved = {
        k: v for k, v in (definition.get(RESOLVED) or {}).items() if k.lower() != known.lower()
    }
    definition[RESOLVED] = {**resolved, known: properties}
    return job_timing(job, definition)


def _lists(job: JobRecord, calendar: str) -> bool:
    try:
        names = exclusion_names(job.definition)
    except RecurrenceError:
        return False
    return calendar.lower() in (n.lower() for n in names)


def _with_ical(raw: Any) -> bool:
    properties = lookup(raw, "properties") if isinstance(raw, dict) else None
    return isinstance(properties, dict) and lookup(properties, "ical") is not None


def _date(value: str, field: str) -> date:
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        raise BadRequest(f"{field}: {value!r} is not a YYYY-MM-DD date") from None
    if not FIRST_DAY <= day < LAST_DAY:
        raise BadRequest(f"{field}: {day.isoformat()} is outside 1900-01-01..9000-01-01")
    return day


def _text(instant: datetime) -> str:
    return datetimes.format_instant(instant)
