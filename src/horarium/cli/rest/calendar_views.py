"""How the calendar commands show an exclusion calendar: what it excludes in a few words, its
content line by line, and the jobs of its collection that list it."""

from __future__ import annotations

from typing import Any

from horarium.cli.rest.job_views import short_name
from horarium.cli.rest.output import NONE, dig, plural

CALENDAR_HEADERS = ("NAME", "EXCLUDES", "USED BY")


def holidays_text(holidays: Any) -> str:
    """`US/NY` for `{"country": "US", "subdivision": "NY"}`."""
    if not isinstance(holidays, dict):
        return NONE
    country, subdivision = holidays.get("country"), holidays.get("subdivision")
    return f"{country}/{subdivision}" if subdivision else str(country)


def summary(properties: Any) -> str:
    """What a calendar excludes, in a few words: `weekends, holidays US/NY, 3 dates`."""
    if not isinstance(properties, dict):
        return "nothing"
    parts = []
    if properties.get("weekends"):
        parts.append("weekends")
    if properties.get("holidays"):
        parts.append(f"holidays {holidays_text(properties['holidays'])}")
    if properties.get("dates"):
        parts.append(plural(len(properties["dates"]), "date"))
    if properties.get("ranges"):
        parts.append(plural(len(properties["ranges"]), "range"))
    if properties.get("ical"):
        parts.append(f"iCalendar ({plural(len(str(properties['ical']).encode()), 'byte')})")
    return ", ".join(parts) or "nothing"


def users_by_calendar(jobs: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Calendar name (lower case: names are case-insensitive) → the jobs that list it."""
    found: dict[str, list[str]] = {}
    for job in jobs:
        listed = dig(job, "properties", "recurrence", "excludeCalendars")
        for name in listed if isinstance(listed, list) else []:
            found.setdefault(str(name).lower(), []).append(short_name(job))
    return found


def used_by(users: dict[str, list[str]], body: dict[str, Any]) -> str:
    return ", ".join(users.get(short_name(body).lower(), [])) or NONE


def calendar_row(body: dict[str, Any], users: dict[str, list[str]]) -> list[str]:
    return [short_name(body), summary(body.get("properties")), used_by(users, body)]


def calendar_pairs(body: dict[str, Any], users: dict[str, list[str]]) -> list[tuple[str, str]]:
    """`name  value` lines: every date and range on a line of its own."""
    properties = body.get("properties") or {}
    pairs = [
        ("name", short_name(body)),
        ("excludes", summary(properties)),
        ("weekends", "yes" if properties.get("weekends") else "no"),
        ("holidays", holidays_text(properties.get("holidays"))),
    ]
    dates = properties.get("dates") or []
    pairs += [("dates" if i == 0 else "", str(d)) for i, d in enumerate(dates)] or [("dates", NONE)]
    ranges = [f"{r.get('start')} to {r.get('end')}" for r in properties.get("ranges") or []]
    pairs += [("ranges" if i == 0 else "", r) for i, r in enumerate(ranges)] or [("ranges", NONE)]
    ical = properties.get("ical")
    pairs.append(("ical", plural(len(str(ical).encode()), "byte") if ical else NONE))
    pairs += [("used by", used_by(users, body)), ("id", str(body.get("id", NONE)))]
    return pairs
