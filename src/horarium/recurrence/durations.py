"""Durations as Horarium reads them everywhere (`retryInterval`, `timeToLive`,
`recurrence.jitter`): .NET TimeSpan or ISO 8601."""

from __future__ import annotations

import re
from datetime import timedelta

import isodate

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
    m = _TIMESPAN.fullmatch(text)
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
