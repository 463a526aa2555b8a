"""Durations (`retryInterval`, `timeToLive`): read as .NET TimeSpan or ISO 8601, stored and
written as TimeSpan (`00:00:30`, `1.00:00:00`), the form the live service used on the wire."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import isodate

from horarium.model.errors import BadRequest

_TIMESPAN = re.compile(
    r"^(?:(?P<days>\d{1,8})\.)?(?P<hours>\d{1,2}):(?P<minutes>\d{1,2})"
    r"(?::(?P<seconds>\d{1,2})(?:\.(?P<fraction>\d{1,7}))?)?$"
)


def read_duration(text: str) -> timedelta:
    """The one reader of durations in Horarium (API, engine, actions): .NET TimeSpan
    (`[d.]hh:mm[:ss[.fffffff]]`) or ISO 8601 without months or years, never negative.

    Raises ValueError with the rule, worded to follow the value (the caller names the field).
    """
    text = text.strip()
    m = _TIMESPAN.match(text)
    if m:
        hours, minutes = int(m["hours"]), int(m["minutes"])
        seconds = int(m["seconds"] or 0)
        if hours > 23 or minutes > 59 or seconds > 59:
            raise ValueError("is not a valid TimeSpan ([d.]hh:mm:ss)")
        fraction = (m["fraction"] or "").ljust(7, "0")
        return timedelta(
            days=int(m["days"] or 0),
            hours=hours,
            minutes=minutes,
            seconds=seconds,
            microseconds=int(fraction) // 10,
        )
    try:
        parsed = isodate.parse_duration(text)
    except (isodate.ISO8601Error, ValueError, OverflowError, TypeError) as e:
        raise ValueError(
            "is neither a TimeSpan ('00:00:30') nor an ISO 8601 duration ('PT30S')"
        ) from e
    if not isinstance(parsed, timedelta):
        raise ValueError("is not allowed: months and years have no fixed length in a duration")
    if parsed < timedelta(0):
        raise ValueError("is negative")
    return parsed


def parse_duration(value: Any, path: str) -> timedelta:
    """A non-negative duration; a 400 naming `path` when it is neither form."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{path}: must be a duration such as '00:00:30' or 'PT30S'")
    try:
        return read_duration(value)
    except ValueError as e:
        raise BadRequest(f"{path}: {value!r} {e}") from e


def format_timespan(value: timedelta) -> str:
    """.NET TimeSpan text: `[d.]hh:mm:ss[.fffffff]`."""
    total_us = value // timedelta(microseconds=1)
    days, rest = divmod(total_us, 86_400_000_000)
    seconds, micro = divmod(rest, 1_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = f"{hours:02d}:{minutes:02d}:{seconds:02d}"
    if days:
        text = f"{days}.{text}"
    if micro:
        text += f".{micro * 10:07d}"
    return text


def format_iso(value: timedelta) -> str:
    """ISO 8601 (`PT30S`), for clients that cannot read TimeSpans."""
    return str(isodate.duration_isoformat(value))
