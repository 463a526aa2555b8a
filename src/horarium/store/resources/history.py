"""The management API's SQL for job history (the engine writes it; the API reads it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select, true
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.history import HistoryEntry
from horarium.store.core.schema import job_collections, job_history, jobs

_h = job_history.c
ENTRY_COLUMNS = (
    _h.id,
    _h.action_name,
    _h.status,
    _h.retry_count,
    _h.repeat_count,
    _h.expected_execution_time,
    _h.start_time,
    _h.end_time,
    _h.message,
)


def _entry(row: Any) -> HistoryEntry:
    return HistoryEntry(
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


async def page(
    conn: AsyncConnection, job_id: int, *, status: str | None, limit: int, offset: int
) -> list[HistoryEntry]:
    """Entries newest first; `limit` rows from `offset`."""
    query = select(*ENTRY_COLUMNS).where(_h.job_id == job_id)
    if status is not None:
        query = query.where(_h.status == status)
    query = query.order_by(_h.id.desc()).limit(limit).offset(offset)
    return [_entry(row) for row in await conn.execute(query)]


@dataclass(frozen=True)
class SubscriptionEntry:
    """A history entry with the job and collection it belongs to."""

    entry: HistoryEntry
    subscription_id: str
    resource_group: str
    collection: str
    job: str
    job_state: str
    job_definition: dict[str, Any]  # as stored (secrets sealed)


async def subscription_page(
    conn: AsyncConnection,
    subscription: str,
    statuses: tuple[str, ...],
    *,
    limit: int,
    offset: int,
) -> list[SubscriptionEntry]:
    """A subscription's entries with one of `statuses`, across its collections, newest first;
    `limit` rows from `offset`."""
    j, c = jobs.c, job_collections.c
    query = (
        select(
            *ENTRY_COLUMNS,
            j.name.label("job_name"),
            j.state.label("job_state"),
            j.definition.label("job_definition"),
            c.subscription_id,
            c.resource_group,
            c.name.label("collection_name"),
        )
        .join(jobs, j.id == _h.job_id)
        .join(job_collections, c.id == j.collection_id)
        .where(func.lower(c.subscription_id) == subscription.lower(), _h.status.in_(statuses))
        .order_by(_h.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return [
        SubscriptionEntry(
            _entry(row),
            row.subscription_id,
            row.resource_group,
            row.collection_name,
            row.job_name,
            row.job_state,
            row.job_definition,
        )
        for row in await conn.execute(query)
    ]


@dataclass(frozen=True)
class JobOutcomes:
    """A job of a collection and its newest history entries (newest first)."""

    job: str
    entries: list[HistoryEntry]


async def latest_per_job(
    conn: AsyncConnection, collection_id: int, count: int
) -> list[JobOutcomes]:
    """Every job of the collection (by name) with its newest `count` history entries, read per
    job from the (job_id, id) index: `count` index steps a job, however long its history."""
    j = jobs.c
    newest: Select[Any]
    if conn.dialect.name == "postgresql":
        per_job = (
            select(*ENTRY_COLUMNS, _h.job_id)
            .where(_h.job_id == j.id)
            .order_by(_h.id.desc())
            .limit(count)
            .lateral("newest")
        )
        newest = (
            select(per_job)
            .select_from(jobs)
            .join(per_job, true())
            .where(j.collection_id == collection_id)
            .order_by(per_job.c.job_id, per_job.c.id.desc())
        )
    else:  # SQLite has no LATERAL: each job's `count`-th newest id bounds its index range
        older = job_history.alias("older")
        nth_newest = (
            select(older.c.id)
            .where(older.c.job_id == j.id)
            .order_by(older.c.id.desc())
            .limit(1)
            .offset(count - 1)
            .scalar_subquery()
        )
        newest = (
            select(*ENTRY_COLUMNS, _h.job_id)
            .join(jobs, j.id == _h.job_id)
            .where(j.collection_id == collection_id, _h.id >= func.coalesce(nth_newest, 0))
            .order_by(_h.job_id, _h.id.desc())
        )
    found: dict[int, list[HistoryEntry]] = {}
    for row in await conn.execute(newest):
        found.setdefault(row.job_id, []).append(_entry(row))
    names = select(j.id, j.name).where(j.collection_id == collection_id).order_by(j.name)
    return [JobOutcomes(name, found.get(job_id, [])) for job_id, name in await conn.execute(names)]
