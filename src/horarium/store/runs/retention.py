"""Retention SQL: history is kept for 60 days and at most `keep` entries per job (and check-ins
so per monitor: `CHECK_INS`); Completed and Faulted jobs are deleted 60 days after they ended.
Every statement walks an index and deletes in bounded chunks, so a cleanup never holds the write
lock for long.

The per-job trim looks only at jobs with history written since its last pass: `engine_marks`
keeps the id of the newest entry it has examined, so a restart resumes where it stopped and
every process of a cluster may run it (trimming twice deletes nothing more). Which of those
jobs hold more than they keep is found by reads, without the write lock; only those are written
to, a few per transaction, so check-ins and claims never wait long behind a pass.

On PostgreSQL the history is partitioned by day (`store.runs.partitions`): age removes whole
partitions, so an entry goes between 60 and 61 days after it ended; only the partitions that
are not one day's have their rows deleted by age."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Select, Table, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from horarium.model.enums import FINAL_JOB_STATES
from horarium.store.core.db import write_transaction
from horarium.store.core.schema import engine_marks, job_history, jobs, monitor_check_ins
from horarium.store.resources.jobs import lock_executions
from horarium.store.runs.partitions import aged_by_rows, partitions

CHUNK = 2000
OWNERS_PER_READ = 500  # owners counted by one read of the trim
OWNERS_PER_TRANSACTION = 10  # owners trimmed by one write transaction
TRIM_MARK = "history_trim"  # its row is made by migration 0004


@dataclass(frozen=True)
class Kept:
    """A history-like table: entries by `owner`, newest first by `id`, aged by `ended`, trimmed
    from the mark `mark` (its row made by a migration)."""

    table: Table
    owner: str
    ended: str
    mark: str


HISTORY = Kept(job_history, "job_id", "end_time", TRIM_MARK)
CHECK_INS = Kept(monitor_check_ins, "monitor_id", "received_at", "check_in_trim")  # 0011


async def delete_history_before(db: AsyncEngine, cutoff: datetime, kept: Kept = HISTORY) -> int:
    """Delete entries that ended before `cutoff`; returns how many."""
    table = kept.table
    total = 0
    while True:
        async with write_transaction(db) as conn:
            ids = _skipping_locked(
                select(table.c.id).where(table.c[kept.ended] < cutoff).limit(CHUNK)
            )
            done = await conn.execute(delete(table).where(table.c.id.in_(ids)))
        total += done.rowcount
        if done.rowcount < CHUNK:
            return total


async def delete_aged_history(db: AsyncEngine, cutoff: datetime) -> int:
    """Delete the job history entries that ended before `cutoff` and that no partition's drop
    removes (`partitions.drop_partitions_before`): all of them on SQLite; returns how many."""
    async with db.connect() as conn:
        existing = await partitions(conn)
    if existing is None:
        return await delete_history_before(db, cutoff)
    total = 0
    for table in aged_by_rows(existing):
        total += await delete_history_before(db, cutoff, replace(HISTORY, table=table))
    return total


async def trim_history(db: AsyncEngine, keep: int, kept: Kept = HISTORY) -> int:
    """Trim to its newest `keep` entries the history of every owner written to since the last
    trim; returns how many entries were deleted."""
    table = kept.table
    async with db.connect() as conn:
        mark = await _mark(conn, kept.mark)
        newest = (await conn.execute(select(func.max(table.c.id)))).scalar()
        if newest is None or newest <= mark:
            return 0
        written = select(table.c[kept.owner]).where(table.c.id > mark, table.c.id <= newest)
        owner_ids = sorted(set((await conn.execute(written.distinct())).scalars()))
        crowded = await _holding_more_than(conn, kept, owner_ids, keep)
    total = 0
    for start in range(0, len(crowded), OWNERS_PER_TRANSACTION):
        async with write_transaction(db) as conn:
            for owner_id in crowded[start : start + OWNERS_PER_TRANSACTION]:
                total += await _keep_newest(conn, kept, owner_id, keep)
    async with write_transaction(db) as conn:
        await _set_mark(conn, kept.mark, newest)
    return total


async def _holding_more_than(
    conn: AsyncConnection, kept: Kept, owner_ids: list[int], keep: int
) -> list[int]:
    """Those of `owner_ids` with more than `keep` entries (reads of the owner's index)."""
    owner = kept.table.c[kept.owner]
    found: list[int] = []
    for start in range(0, len(owner_ids), OWNERS_PER_READ):
        chunk = owner_ids[start : start + OWNERS_PER_READ]
        counted = select(owner).where(owner.in_(chunk)).group_by(owner)
        found += (await conn.execute(counted.having(func.count() > keep))).scalars()
    return sorted(found)


async def _keep_newest(conn: AsyncConnection, kept: Kept, owner_id: int, keep: int) -> int:
    table, owner = kept.table, kept.table.c[kept.owner]
    boundary = (
        select(table.c.id)
        .where(owner == owner_id)
        .order_by(table.c.id.desc())
        .offset(keep - 1)
        .limit(1)
        .scalar_subquery()
    )
    older = _skipping_locked(select(table.c.id).where(owner == owner_id, table.c.id < boundary))
    # The owner again: a partitioned history is then read by its (owner, id) index, not scanned
    # whole for the ids (an id alone does not tell which partition holds it).
    done = await conn.execute(delete(table).where(owner == owner_id, table.c.id.in_(older)))
    return done.rowcount


async def _mark(conn: AsyncConnection, name: str) -> int:
    found = await conn.execute(select(engine_marks.c.value).where(engine_marks.c.name == name))
    return int(found.scalar() or 0)


async def _set_mark(conn: AsyncConnection, name: str, value: int) -> None:
    """Move the mark forward to `value` (never back: another process may be further)."""
    await conn.execute(
        update(engine_marks)
        .where(engine_marks.c.name == name, engine_marks.c.value < value)
        .values(value=value)
    )


async def delete_jobs_ended_before(db: AsyncEngine, cutoff: datetime) -> int:
    """Delete Completed and Faulted jobs that ended before `cutoff` (their history and pending
    run-now requests go with them); returns how many."""
    total = 0
    while True:
        async with write_transaction(db) as conn:
            found = select(jobs.c.id).where(
                jobs.c.ended_at < cutoff, jobs.c.state.in_(FINAL_JOB_STATES)
            )
            ids = list((await conn.execute(_skipping_locked(found.limit(200)))).scalars())
            if not ids:
                return total
            await lock_executions(conn, ids)
            done = await conn.execute(delete(jobs).where(jobs.c.id.in_(ids)))
        total += done.rowcount
        if len(ids) < 200:
            return total


def _skipping_locked(query: Select[Any]) -> Select[Any]:
    """`query` locking the rows it reads and passing over those another transaction holds
    (PostgreSQL; SQLite has one writer): a retention delete never waits for a row, so two
    processes' retention, or retention and a job's deletion, cannot deadlock on them."""
    return query.with_for_update(skip_locked=True)
