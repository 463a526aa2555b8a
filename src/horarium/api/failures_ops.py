"""Beyond Azure: a subscription's recent Failed and Postponed history entries, across its
collections, newest first, each with its job's id and state (a Faulted job shows there)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.history import HistoryEntry, render_history
from horarium.model.names import CollectionName
from horarium.store.schema import job_collections, job_history, jobs

FAILURE_STATUSES = ("Failed", "Postponed")


async def list_page(
    conn: AsyncConnection, subscription: str, *, status: str | None, limit: int, offset: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of entries, and whether another page follows."""
    h, j, c = job_history.c, jobs.c, job_collections.c
    statuses = (status,) if status is not None else FAILURE_STATUSES
    query = (
        select(
            h.id,
            h.action_name,
            h.status,
            h.retry_count,
            h.repeat_count,
            h.expected_execution_time,
            h.start_time,
            h.end_time,
            h.message,
            j.name.label("job_name"),
            j.state.label("job_state"),
            c.subscription_id,
            c.resource_group,
            c.name.label("collection_name"),
        )
        .join(jobs, j.id == h.job_id)
        .join(job_collections, c.id == j.collection_id)
        .where(func.lower(c.subscription_id) == subscription.lower(), h.status.in_(statuses))
        .order_by(h.id.desc())
        .limit(limit + 1)
        .offset(offset)
    )
    rows = list(await conn.execute(query))
    return [_render(row) for row in rows[:limit]], len(rows) > limit


def _render(row: Any) -> dict[str, Any]:
    names = CollectionName(row.subscription_id, row.resource_group, row.collection_name)
    job_id = f"{names.arm_id}/jobs/{row.job_name}"
    entry = HistoryEntry(
        row_id=row.id,
        action_name=row.action_name,
        status=row.status,
        retry_count=row.retry_count,
        repeat_count=row.repeat_count,
        expected_execution_time=row.expected_execution_time,
        start_time=row.start_time,
        end_time=row.end_time,
        message=row.message,
    )
    rendered = render_history(job_id, f"{row.collection_name}/{row.job_name}", entry)
    rendered["properties"]["jobId"] = job_id
    rendered["properties"]["jobState"] = row.job_state
    return rendered
