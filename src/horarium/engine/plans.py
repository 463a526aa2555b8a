"""Compiled recurrence plans, one per recurring job, the most recently used kept.

A job's plan depends on its definition and on when its schedule was set; every API write bumps
the job's version, so (version, schedule set at) tells whether a kept plan is still the job's.
Compiling a plan validates the definition again and builds its series, far more work than a
lookup; a recurring job runs again after all the others due before its next execution, so the
cache keeps up to `size` jobs' plans and evicts the least recently used one: a store whose
recurring jobs fit compiles each plan once per process (docs/engine.md, "The plan cache").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

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


class _Kept(NamedTuple):
    version: int
    created: datetime
    plan: Plan


class Plans:
    """The plans of up to `size` recurring jobs (0: none kept, every use compiles)."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"plan cache size must be 0 or more, not {size}")
        self._size = size
        self._kept: OrderedDict[int, _Kept] = OrderedDict()  # least recently used first

    def __len__(self) -> int:
        return len(self._kept)

    def get(
        self, job_id: int, version: int, created: datetime, definition: Mapping[str, Any]
    ) -> Plan | OneTime:
        """Job `job_id`'s plan at `version`, its schedule set at `created`."""
        if definition.get("recurrence") is None:
            return ONE_TIME
        kept = self._kept.get(job_id)
        if kept is not None and kept.version == version and kept.created == created:
            self._kept.move_to_end(job_id)
            return kept.plan
        compiled = plan(definition, created=created)
        if self._size:
            self._keep(job_id, _Kept(version, created, compiled))
        return compiled

    def _keep(self, job_id: int, kept: _Kept) -> None:
        """Keep `kept` as the job's plan (replacing an older version's), most recently used;
        over `size`, the least recently used plan goes."""
        self._kept[job_id] = kept
        self._kept.move_to_end(job_id)
        if len(self._kept) > self._size:
            self._kept.popitem(last=False)
