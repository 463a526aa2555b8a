"""Date-times on the wire: ISO 8601 in, `…Z` (UTC, trailing zeros trimmed, .NET style) out.

A value with an offset is an instant and is stored in UTC. A value without one stays wall-clock
text: the recurrence contract reads it in the job's time zone (UTC when there is none).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from horarium.model.errors import BadRequest

_DATETIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[Tt ](?P<h>\d{2}):(?P<m>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?)?"
    r"(?P<zone>[Zz]|[+-]\d{2}:?\d{2})?$"
)


def parse(value: Any, path: str) -> datetime:
    """Aware (UTC) when the text carries an offset, naive otherwise. Fractions beyond the
    microsecond are rounded (`16.9049999999999999` -> `16.905`), as .NET rounds to ticks."""
    if not isinstance(value, str):
        raise BadRequest(f"{path}: must be an ISO 8601 date-time string")
    m = _DATETIME.fullmatch(value.strip())
    if not m:
        raise BadRequest(f"{path}: {value!r} is not an ISO 8601 date-time")
    try:
        year, month, day = (int(p) for p in m["date"].split("-"))
        result = datetime(year, month, day, int(m["h"] or 0), int(m["m"] or 0), int(m["s"] or 0))
        if m["f"]:
            ticks = round(int(m["f"][:18]) / 10 ** len(m["f"][:18]) * 10_000_000)
            result += timedelta(microseconds=round(ticks / 10))
        zone = m["zone"]
        if zone:
            if zone in ("Z", "z"):
                return result.replace(tzinfo=UTC)
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            hours, minutes = int(digits[:2]), int(digits[2:])
            if hours > 14 or minutes > 59:
                raise ValueError("offset out of range")
            offset = timezone(sign * timedelta(hours=hours, minutes=minutes))
            return result.replace(tzinfo=offset).astimezone(UTC)
        return result
    except (ValueError, OverflowError) as e:
        raise BadRequest(f"{path}: {value!r} is not a valid date-time ({e})") from e


def format_instant(value: datetime, *, utc_if_naive: bool = True) -> str:
    """`2016-03-30T20:40:55.469507Z`: UTC with `Z`, fraction trimmed of trailing zeros.
    Naive (wall-clock) values keep no suffix unless `utc_if_naive`."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
        suffix = "Z"
    else:
        suffix = "Z" if utc_if_naive else ""
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text + suffix


def format_ticks(value: datetime) -> str:
    """History times: always seven fractional digits, like .NET ticks."""
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S") + f".{value.microsecond:06d}0Z"


def canonical(value: Any, path: str) -> str:
    """The stored text of an input date-time: `…Z` for instants, bare for wall-clock times."""
    return format_instant(parse(value, path), utc_if_naive=False)


def render(stored: str, *, has_zone: bool) -> str:
    """The wire text of a stored date-time: wall-clock times are UTC unless a zone is set."""
    try:
        value = parse(stored, "value")
    except BadRequest:
        return stored  # a form only the recurrence engine reads: shown as given
    return format_instant(value, utc_if_naive=not has_zone)
