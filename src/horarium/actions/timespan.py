"""Durations as the live service wrote them: .NET TimeSpan `[-][d.]hh:mm:ss[.f]` or ISO 8601."""

from __future__ import annotations

import re
from datetime import timedelta

import isodate

from horarium.actions.fields import ActionInputError

_TIMESPAN = re.compile(
    r"^(?P<sign>-)?(?:(?P<days>\d+)\.)?(?P<h>\d{1,2}):(?P<m>\d{1,2})(?::(?P<s>\d{1,2})"
    r"(?:\.(?P<frac>\d{1,7}))?)?$"
)


def parse_duration(value: str, field: str) -> timedelta:
    """`00:00:30`, `1.00:00:00`, `PT30S`, `P1D` -> timedelta; anything else names `field`."""
    text = value.strip()
    match = _TIMESPAN.match(text)
    if match:
        hours, minutes = int(match["h"]), int(match["m"])
        seconds = int(match["s"] or 0)
        if hours > 23 or minutes > 59 or seconds > 59:
            raise ActionInputError(f"'{field}' has an hour, minute or second out of range")
        span = timedelta(
            days=int(match["days"] or 0),
            hours=hours,
            minutes=minutes,
            seconds=seconds,
            microseconds=int((match["frac"] or "0").ljust(7, "0")) / 10,
        )
        return -span if match["sign"] else span
    try:
        parsed = isodate.parse_duration(text)
    except (isodate.ISO8601Error, ValueError) as exc:
        raise ActionInputError(
            f"'{field}' must be a TimeSpan such as 00:00:30 or an ISO 8601 duration such as PT30S"
        ) from exc
    if not isinstance(parsed, timedelta):  # years or months: no fixed length
        raise ActionInputError(f"'{field}' must not use years or months")
    return parsed
