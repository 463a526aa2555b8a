"""The management API's SQL for exclusion calendars, and for rewriting the jobs that list one.

A job's stored definition carries a copy of the calendars it lists (`resolvedCalendars`), so a
calendar write rewrites those jobs: the copy is replaced in the stored form itself, which leaves
the job's sealed secrets as they are (they are bound to the action's target only)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.store.core.schema import calendars, jobs


@dataclass(frozen=True)
class CalendarRecord:
    id: int
    name: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class StoredJob:
    """A job as the calendar rewrite needs it: its stored (sealed) definition and schedule."""

    id: int
    name: str
    definition: dict[str, Any]  # the stored form, secrets sealed
    state: str
    schedule_set_at: datetime
    next_execution_at: datetime | None
    next_repeat: int
    leased: bool  # an engine process holds its due execution


_COLUMNS = (calendars.c.id, calendars.c.name, calendars.c.properties)


def _record(row: Any) -> CalendarRecord:
    return CalendarRecord(id=row.id, name=row.name, properties=dict(row.properties or {}))


async def get(conn: AsyncConnection, collection_id: int, name: str) -> CalendarRecord | None:
    query = select(*_COLUMNS).where(
        calendars.c.collection_id == collection_id, calendars.c.key == name.lower()
    )
    row = (await conn.execute(query)).first()
    return _record(row) if row is not None else None


async def all_of(conn: AsyncConnection, collection_id: int) -> list[CalendarRecord]:
    query = (
        select(*_COLUMNS)
        .where(calendars.c.collection_id == collection_id)
        .order_by(calendars.c.key)
    )
    return [_record(row) for row in await conn.execute(query)]


async def put(
    conn: AsyncConnection,
    collection_id: int,
    name: str,
    properties: dict[str, Any],
    now: datetime,
    existing: CalendarRecord | None,
) -> None:
    """Create the calendar, or replace the properties of `existing` (its name's spelling too)."""
    if existing is None:
        await conn.execute(
            insert(calendars).values(
                collection_id=collection_id,
                key=name.lower(),
                name=name,
                properties=properties,
                created_at=now,
                updated_at=now,
            )
        )
        return
    await conn.execute(
        update(calendars)
        .where(calendars.c.id == existing.id)
        .values(name=name, properties=properties, updated_at=now)
    )


async def delete_one(conn: AsyncConnection, calendar_id: int) -> None:
    await conn.execute(delete(calendars).where(calendars.c.id == calendar_id))


async def stored_jobs(conn: AsyncConnection, collection_id: int) -> list[StoredJob]:
    """The collection's jobs in their stored form, by name."""
    query = (
        select(
            jobs.c.id,
            jobs.c.name,
            jobs.c.definition,
            jobs.c.state,
            jobs.c.schedule_set_at,
            jobs.c.next_execution_at,
            jobs.c.next_repeat,
            jobs.c.lease_owner,
        )
        .where(jobs.c.collection_id == collection_id)
        .order_by(jobs.c.key)
    )
    return [
        StoredJob(
            id=row.id,
            name=row.name,
            definition=dict(row.definition),
            state=row.state,
            schedule_set_at=row.schedule_set_at,
            next_execution_at=row.next_execution_at,
            next_repeat=row.next_repeat,
            leased=row.lease_owner is not None,
        )
        for row in await conn.execute(query)
    ]


async def rewrite_job(conn: AsyncConnection, job_id: int, now: datetime, **values: Any) -> None:
    """Set the stored `definition` (as given: already in stored form), `next_execution_at`,
    `state`; `ended_at` follows the state. Bumps `version` (as every API write of a job)."""
    if "state" in values:
        values["ended_at"] = now if values["state"] in ("Completed", "Faulted") else None
    await conn.execute(
        update(jobs)
        .where(jobs.c.id == job_id)
        .values(updated_at=now, version=jobs.c.version + 1, **values)
    )
