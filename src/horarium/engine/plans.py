"""Compiled recurrence plans, cached per job definition (a job's version changes with every
API write, so (job, version, created) identifies its schedule)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from horarium.recurrence import Plan, plan


class OneTime:
    """The series of a job without `recurrence`: its one execution is the one the API stored
    (`plan.first`), so nothing needs compiling (this is most of the cost of a one-time job)."""

    count: int | None = 1
    recurring = False

    def after(self, instant: datetime) -> datetime | None:
        return None

    def iter_from(self, instant: datetime) -> Iterator[datetime]:
        yield instant


ONE_TIME = OneTime()


class Plans:
    def __init__(self, size: int = 10_000) -> None:
        self._size = size
        self._cache: dict[tuple[int, int, datetime], Plan] = {}

    def get(
        self, job_id: int, version: int, created: datetime, definition: Mapping[str, Any]
    ) -> Plan | OneTime:
        if definition.get("recurrence") is None:
            return ONE_TIME
        key = (job_id, version, created)
        found = self._cache.get(key)
        if found is None:
            found = plan(definition, created=created)
            if len(self._cache) >= self._size:
                self._cache.clear()
            self._cache[key] = found
        return found
