"""Ending pauses (the engine's side of `model.pause`): a Disabled job or collection whose pause
has run out is enabled again, as the API enables one, except that its series resumes at the
first execution at or after the pause *began*: the executions that fell due meanwhile are then
found late by the claim, and the missed-execution rule decides them (the latest runs once, the
others are Postponed).

Every statement reads the `paused_until` indexes; any process of a cluster may do it (each row
is re-checked in the transaction that enables it, so two processes enable it once)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, union_all, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from horarium.model.enums import FINAL_JOB_STATES, CollectionState, JobState
from horarium.model.errors import BadRequest
from horarium.model.pause import PAUSE, since_of
from horarium.model.schedule import timing
from horarium.store.core.db import write_transaction
from horarium.store.core.schema import job_collections, jobs
from horarium.store.resources import run_requests

log = logging.getLogger("horarium.store.pauses")  # the name its log lines have always carried

BATCH = 100  # pauses ended per transaction


@dataclass(frozen=True)
class Ended:
    """How many pauses one pass ended."""

    jobs: int = 0
    collections: int = 0


async def next_end(db: AsyncEngine) -> datetime | None:
    """The earliest instant a pause ends (two index lookups)."""
    ends = union_all(
        select(func.min(jobs.c.paused_until).label("at")),
        select(func.min(job_collections.c.paused_until).label("at")),
    ).subquery()
    async with db.connect() as conn:
        found = (await conn.execute(select(func.min(ends.c.at)))).scalar()
    return found if isinstance(found, datetime) else None


async def end_due(db: AsyncEngine, now: datetime) -> Ended:
    """Enable every job and collection whose pause ended by `now`."""
    collections_done = jobs_done = 0
    while True:
        async with write_transaction(db) as conn:
            c = await _end_collections(conn, now)
            j = await _end_jobs(conn, now)
        collections_done += c
        jobs_done += j
        if c < BATCH and j < BATCH:
            return Ended(jobs_done, collections_done)


async def _end_collections(conn: AsyncConnection, now: datetime) -> int:
    rows = (
        await conn.execute(
            _locked(
                conn,
                select(job_collections.c.id, job_collections.c.state, job_collections.c.document)
                .where(job_collections.c.paused_until <= now)
                .limit(BATCH),
            )
        )
    ).all()
    for row in rows:
        document = dict(row.document or {})
        since = since_of(document.get(PAUSE) or {}, now)
        values: dict[str, Any] = {
            "document": {k: v for k, v in document.items() if k != PAUSE},
            "paused_until": None,
            "updated_at": now,
        }
        if row.state == CollectionState.DISABLED:
            values["state"] = CollectionState.ENABLED
            await _enable_members(conn, row.id, since, now)
        await conn.execute(
            update(job_collections).where(job_collections.c.id == row.id).values(**values)
        )
        log.info("pause ended: collection %s enabled", row.id)
    return len(rows)


async def _enable_members(
    conn: AsyncConnection, collection_id: int, since: datetime, now: datetime
) -> None:
    """The collection's jobs, as the API's enable does, resumed from `since`; a job with a pause
    of its own that has not ended stays Disabled."""
    members = await conn.execute(
        select(*_JOB).where(
            jobs.c.collection_id == collection_id, jobs.c.state.not_in(FINAL_JOB_STATES)
        )
    )
    for job in members.all():
        if job.paused_until is not None and job.paused_until > now:
            continue
        await _resume(conn, job, since, now, collection_enabled=True)


async def _end_jobs(conn: AsyncConnection, now: datetime) -> int:
    query = (
        select(*_JOB, job_collections.c.state.label("collection_state"))
        .join(job_collections, job_collections.c.id == jobs.c.collection_id)
        .where(jobs.c.paused_until <= now)
        .limit(BATCH)
    )
    rows = (await conn.execute(_locked(conn, query))).all()
    for job in rows:
        pause = job.definition.get(PAUSE) or {}
        if job.state == JobState.DISABLED:
            enabled = job.collection_state == CollectionState.ENABLED
            await _resume(conn, job, since_of(pause, now), now, collection_enabled=enabled)
        else:
            await _clear(conn, job, now, {})
    return len(rows)


_JOB = (
    jobs.c.id,
    jobs.c.name,
    jobs.c.definition,
    jobs.c.state,
    jobs.c.schedule_set_at,
    jobs.c.next_repeat,
    jobs.c.paused_until,
)


async def _resume(
    conn: AsyncConnection, job: Any, since: datetime, now: datetime, *, collection_enabled: bool
) -> None:
    """Enable `job`, its series resuming at the first execution at or after `since`."""
    try:
        timed = timing(
            job.definition,
            state=JobState.ENABLED,
            schedule_set_at=job.schedule_set_at,
            now=since,
            executions_done=job.next_repeat - 1,
            collection_enabled=collection_enabled,
            fresh=False,
        )
    except BadRequest as exc:
        log.warning("pause ended: job %s stays Disabled, its schedule fails: %s", job.id, exc)
        await _clear(conn, job, now, {})
        return
    state = timed.state
    if state == JobState.COMPLETED and await run_requests.continues_series(
        conn, job.id, job.schedule_set_at
    ):
        state = JobState.ENABLED
    values = {
        "state": state,
        "next_execution_at": timed.next_execution_at,
        "ended_at": now if state in FINAL_JOB_STATES else None,
    }
    await _clear(conn, job, now, values)
    log.info("pause ended: job %s (%s) is %s", job.id, job.name, state)


async def _clear(conn: AsyncConnection, job: Any, now: datetime, values: dict[str, Any]) -> None:
    """Write `values` and drop the job's pause, as an API write (its version moves on). The
    stored definition is changed as stored: its sealed secrets do not cover the pause."""
    definition = {k: v for k, v in job.definition.items() if k != PAUSE}
    await conn.execute(
        update(jobs)
        .where(jobs.c.id == job.id)
        .values(
            definition=definition,
            paused_until=None,
            updated_at=now,
            version=jobs.c.version + 1,
            **values,
        )
    )


def _locked(conn: AsyncConnection, query: Any) -> Any:
    """On PostgreSQL, rows another process is ending are skipped (SQLite has one writer)."""
    if conn.dialect.name == "sqlite":
        return query
    return query.with_for_update(skip_locked=True, of=query.selected_columns[0].table)
