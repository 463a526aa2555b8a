"""Execution tags: random for a run-now request, derived from the occurrence for an execution of
a job's series (so an execution replayed after a crash carries the tag of its first try)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def new_tag() -> str:
    """A random execution tag: 32 hex characters, as the live service's."""
    return uuid.uuid4().hex


def series_key(job_id: int, schedule_set_at: datetime, repeat: int, expected: datetime) -> str:
    """What identifies an occurrence of a job's series: the job, its series (when it was set)
    and the occurrence (its `repeatCount` and expected time), instants in microseconds since
    the Unix epoch."""
    return f"{job_id}/{_micros(schedule_set_at)}/{repeat}/{_micros(expected)}"


def _micros(instant: datetime) -> int:
    return (instant - _EPOCH) // _MICROSECOND


def series_tag(job_id: int, schedule_set_at: datetime, repeat: int, expected: datetime) -> str:
    """The execution tag of an occurrence: the 128-bit BLAKE2b digest of `series_key(…)` in 32
    hex characters, the same every time it is computed."""
    key = series_key(job_id, schedule_set_at, repeat, expected)
    return hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def is_series_tag(
    tag: str, job_id: int, schedule_set_at: datetime, repeat: int, expected: datetime
) -> bool:
    """Whether `tag` is the tag the series set at `schedule_set_at` gives this occurrence."""
    return tag == series_tag(job_id, schedule_set_at, repeat, expected)
