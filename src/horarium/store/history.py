"""The management API's SQL for job history (the engine writes it; the API reads it)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.history import HistoryEntry
from horarium.store.schema import job_history


async def page(
    conn: AsyncConnection, job_id: int, *, status: str | None, limit: int, offset: int
) -> list[HistoryEntry]:
    """Entries newest first; `limit` rows from `offset`."""
    h = job_history.c
    query = select(
        h.id,
        h.action_name,
        h.status,
        h.retry_count,
        h.repeat_count,
        h.expected_execution_time,
        h.start_time,
        h.end_time,
        h.message,
    ).where(h.job_id == job_id)
    if status is not None:
        query = query.where(h.status == status)
    query = query.order_by(h.id.desc()).limit(limit).offset(offset)
    return [
        HistoryEntry(
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
        for row in await conn.execute(query)
    ]
