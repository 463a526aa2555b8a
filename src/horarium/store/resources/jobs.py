"""The management API's SQL for jobs. Every write bumps `version`, so an engine write that raced
with it (conditional on the version it read) cannot overwrite the new definition.

Definitions go in sealed and come out with their secrets usable (`store.core.sealing`, with the
keyring attached to the connection's engine)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.enums import FINAL_JOB_STATES
from horarium.model.execution_policy import policy_of
from horarium.model.pause import PAUSE, until_of
from horarium.store.core.schema import job_deadlines, job_executions, jobs
from horarium.store.core.sealing import (
    SealError,
    keyring_of,
    seal_definition,
    unseal_definition,
    without_secrets,
)


@dataclass(frozen=True)
class JobRecord:
    id: int
    collection_id: int
    name: str
    definition: dict[str, Any]
    state: str
    schedule_set_at: datetime
    version: int
    next_execution_at: datetime | None
    next_repeat: int
    execution_count: int
    failure_count: int
    faulted_count: int
    last_execution_at: datetime | None
    # Set when this process's key cannot open the job's secrets: why (they show as masked).
    unreadable: str | None = None


_COLUMNS = (
    jobs.c.id,
    jobs.c.collection_id,
    jobs.c.name,
    jobs.c.definition,
    jobs.c.state,
    jobs.c.schedule_set_at,
    jobs.c.version,
    jobs.c.next_execution_at,
    jobs.c.next_repeat,
    jobs.c.execution_count,
    jobs.c.failure_count,
    jobs.c.faulted_count,
    jobs.c.last_execution_at,
)


def _reader(conn: AsyncConnection) -> Callable[[Any], JobRecord]:
    """Rows into records, the definition's secrets opened with the engine's keyring."""
    keyring = keyring_of(conn.engine)

    def record(row: Any) -> JobRecord:
        definition, unreadable = row.definition, None
        try:
            definition = unseal_definition(definition, keyring)
        except SealError as exc:
            definition = without_secrets(definition)
            unreadable = f"job '{row.name}': {exc}"
        return _record(row, definition, unreadable)

    return record


def _record(row: Any, definition: dict[str, Any], unreadable: str | None) -> JobRecord:
    return JobRecord(
        id=row.id,
        collection_id=row.collection_id,
        name=row.name,
        definition=definition,
        state=row.state,
        schedule_set_at=row.schedule_set_at,
        version=row.version,
        next_execution_at=row.next_execution_at,
        next_repeat=row.next_repeat,
        execution_count=row.execution_count,
        failure_count=row.failure_count,
        faulted_count=row.faulted_count,
        last_execution_at=row.last_execution_at,
        unreadable=unreadable,
    )


async def get(conn: AsyncConnection, collection_id: int, name: str) -> JobRecord | None:
    row = (
        await conn.execute(
            select(*_COLUMNS).where(
                jobs.c.collection_id == collection_id, jobs.c.key == name.lower()
            )
        )
    ).first()
    return _reader(conn)(row) if row is not None else None


async def page(
    conn: AsyncConnection,
    collection_id: int,
    *,
    state: str | None,
    limit: int,
    offset: int,
) -> list[JobRecord]:
    """Jobs by name; `limit` rows from `offset` (ask one more to know whether a page follows)."""
    query = select(*_COLUMNS).where(jobs.c.collection_id == collection_id)
    if state is not None:
        query = query.where(jobs.c.state == state)
    query = query.order_by(jobs.c.key).limit(limit).offset(offset)
    return list(map(_reader(conn), await conn.execute(query)))


async def all_of(conn: AsyncConnection, collection_id: int) -> list[JobRecord]:
    query = select(*_COLUMNS).where(jobs.c.collection_id == collection_id).order_by(jobs.c.key)
    return list(map(_reader(conn), await conn.execute(query)))


async def count(conn: AsyncConnection, collection_id: int) -> int:
    result = await conn.execute(
        select(func.count()).select_from(jobs).where(jobs.c.collection_id == collection_id)
    )
    return int(result.scalar_one())


async def insert_one(
    conn: AsyncConnection,
    *,
    collection_id: int,
    name: str,
    definition: dict[str, Any],
    state: str,
    next_execution_at: datetime | None,
    now: datetime,
) -> int:
    result = await conn.execute(
        insert(jobs)
        .values(
            collection_id=collection_id,
            key=name.lower(),
            name=name,
            definition=seal_definition(definition, keyring_of(conn.engine)),
            paused_until=until_of(definition.get(PAUSE)),
            state=state,
            schedule_set_at=now,
            created_at=now,
            updated_at=now,
            version=1,
            next_execution_at=next_execution_at,
            next_repeat=1,
            ended_at=now if state in FINAL_JOB_STATES else None,
        )
        .returning(jobs.c.id)
    )
    job_id = int(result.scalar_one())
    await _keep_deadlines(conn, job_id, definition)
    return job_id


async def update_one(conn: AsyncConnection, job_id: int, now: datetime, **values: Any) -> None:
    """Set any of `definition`, `state`, `schedule_set_at`, `next_execution_at`, `next_repeat`;
    `ended_at` follows the state. Bumps `version`. A definition is sealed here."""
    definition = values.get("definition")
    if definition is not None:
        values["paused_until"] = until_of(values["definition"].get(PAUSE))
        values["definition"] = seal_definition(values["definition"], keyring_of(conn.engine))
    if "state" in values:
        ended = values["state"] in FINAL_JOB_STATES
        values["ended_at"] = now if ended else None
    await conn.execute(
        update(jobs)
        .where(jobs.c.id == job_id)
        .values(updated_at=now, version=jobs.c.version + 1, **values)
    )
    if definition is not None:  # after the job row: the engine's lock order
        await _keep_deadlines(conn, job_id, definition)


async def _keep_deadlines(conn: AsyncConnection, job_id: int, definition: dict[str, Any]) -> None:
    """The job's `job_deadlines` row exists exactly while its definition has deadlines (a row
    kept across redefinitions keeps its marks: each names the execution it is for)."""
    d = job_deadlines.c
    if not policy_of(definition).deadlines:
        await conn.execute(delete(job_deadlines).where(d.job_id == job_id))
        return
    found = await conn.execute(select(d.job_id).where(d.job_id == job_id))
    if found.first() is None:
        await conn.execute(insert(job_deadlines).values(job_id=job_id))


async def delete_one(conn: AsyncConnection, job_id: int) -> None:
    """Deletes the job; its history and pending executions go by cascade."""
    await lock_rows(conn, [job_id])
    await lock_executions(conn, [job_id])
    await conn.execute(delete(jobs).where(jobs.c.id == job_id))


async def lock_rows(conn: AsyncConnection, job_ids: Sequence[int]) -> None:
    """Lock job rows `job_ids` in id order (PostgreSQL; SQLite has one writer). A write that
    touches several jobs, or deletes one, takes its rows in the engine's lock order
    (docs/engine.md, "Lock order"): job rows by id, then job_executions rows by id."""
    if job_ids:
        await conn.execute(
            select(jobs.c.id).where(jobs.c.id.in_(job_ids)).order_by(jobs.c.id).with_for_update()
        )


async def lock_executions(conn: AsyncConnection, job_ids: Sequence[int]) -> None:
    """Lock the job_executions rows of jobs `job_ids` in id order, before deleting the jobs
    (their cascade would otherwise take those rows in whatever order it finds them)."""
    if job_ids:
        await conn.execute(
            select(job_executions.c.id)
            .where(job_executions.c.job_id.in_(job_ids))
            .order_by(job_executions.c.id)
            .with_for_update()
        )


async def in_flight(conn: AsyncConnection, job_id: int, now: datetime) -> bool:
    """Whether a process holds the job's due execution under a lease that has not run out."""
    query = select(jobs.c.id).where(
        jobs.c.id == job_id, jobs.c.lease_owner.is_not(None), jobs.c.lease_expires_at > now
    )
    return (await conn.execute(query)).first() is not None
