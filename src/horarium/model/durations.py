"""Durations (`retryInterval`, `timeToLive`): read as .NET TimeSpan or ISO 8601, stored and
written as TimeSpan (`00:00:30`, `1.00:00:00`), the form the live service used on the wire."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import isodate

from horarium.model.errors import BadRequest
from horarium.recurrence import read_duration

__all__ = ["format_iso", "format_timespan", "parse_duration", "read_duration"]


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
