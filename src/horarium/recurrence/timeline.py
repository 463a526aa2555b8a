"""Instants and wall-clock times as integers (microseconds since 0001-01-01), for speed.

A UTC instant and a naive wall-clock time share the scale: day index ``d = ordinal - 1`` times
`DAY` plus the time of day. Integer arithmetic keeps `Plan.at_or_after` within microseconds.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

US = 1
SECOND = 1_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR

_ONE_US = timedelta(microseconds=1)
_UTC_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1, 1, 1)

UNIX_EPOCH = (datetime(1970, 1, 1) - _NAIVE_EPOCH) // _ONE_US

# Beyond this (2 days before year 10000) a series simply ends: no datetime can hold it.
LIMIT = (datetime(9999, 12, 30) - _NAIVE_EPOCH) // _ONE_US


def from_instant(value: datetime) -> int:
    """An aware datetime as UTC microseconds."""
    return (value - _UTC_EPOCH) // _ONE_US


def to_instant(us: int) -> datetime:
    """UTC microseconds as an aware UTC datetime."""
    return _UTC_EPOCH + timedelta(microseconds=us)


def from_wall(value: datetime) -> int:
    """A naive wall-clock datetime as microseconds on the same scale."""
    return (value - _NAIVE_EPOCH) // _ONE_US


def to_wall(us: int) -> datetime:
    """Microseconds as a naive wall-clock datetime."""
    return _NAIVE_EPOCH + timedelta(microseconds=us)
