"""Helpers shared by the action tests (a uniquely named module: several conftest.py exist)."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from horarium.actions.base import ExecutionContext

JOB_ID = (
    "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Scheduler"
    "/jobCollections/coll-1/jobs/job-1"
)
COLLECTION_ID = (
    "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Scheduler/jobCollections/coll-1"
)

ServeApp = Callable[..., Awaitable[str]]


def make_context(**changes: object) -> ExecutionContext:
    values: dict[str, object] = {
        "job_id": JOB_ID,
        "collection_id": COLLECTION_ID,
        "execution_tag": uuid.uuid4().hex,
        "client_request_id": str(uuid.uuid4()),
        "expected_time": datetime(2024, 5, 1, 12, 30, 0, tzinfo=UTC),
        "region": "West Europe",
    }
    values.update(changes)
    return ExecutionContext(**values)  # type: ignore[arg-type]
