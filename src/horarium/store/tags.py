"""Execution tags: random for a run-now request, derived from the occurrence for an execution of
a job's series (so an execution replayed after a crash carries the tag of its first try)."""

from __future__ import annotations

import uuid
from datetime import datetime

SERIES_NAMESPACE = uuid.UUID("6f1c2a52-8a43-4f59-9d2e-3b8f5d0c7e11")


def new_tag() -> str:
    """A random execution tag: 32 hex characters, as the live service's."""
    return uuid.uuid4().hex


def series_key(job_id: int, schedule_set_at: datetime, repeat: int, expected: datetime) -> str:
    """What identifies an occurrence of a job's series."""
    return f"{job_id}/{schedule_set_at.isoformat()}/{repeat}/{expected.isoformat()}"


def series_tag(job_id: int, schedule_set_at: datetime, repeat: int, expected: datetime) -> str:
    """The execution tag of an occurrence: `uuid5(SERIES_NAMESPACE, series_key(…)).hex`, the
    same every time it is computed."""
    key = series_key(job_id, schedule_set_at, repeat, expected)
    return uuid.uuid5(SERIES_NAMESPACE, key).hex


def is_series_tag(
    tag: str, job_id: int, schedule_set_at: datetime, repeat: int, expected: datetime
) -> bool:
    """Whether `tag` is the tag the series set at `schedule_set_at` gives this occurrence."""
    return tag == series_tag(job_id, schedule_set_at, repeat, expected)
