"""Retention SQL: history is kept for 60 days and at most 1,000 entries per job; Completed and
Faulted jobs are deleted 60 days after they ended. Every statement walks an index and deletes in
bounded chunks, so a cleanup never holds the write lock for long."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, select

from horarium.store.runs import Runs
from horarium.store.schema import job_history, jobs

CHUNK = 2000


async def delete_history_before(runs: Runs, cutoff: datetime) -> int:
    """Delete history entries that ended before `cutoff`; returns how many."""
    total = 0
    while True:
        async with runs.write() as conn:
            ids = select(job_history.c.id).where(job_history.c.end_time < cutoff).limit(CHUNK)
            done = await conn.execute(delete(job_history).where(job_history.c.id.in_(ids)))
        total += done.rowcount
        if done.rowcount < CHUNK:
            return total


async def keep_newest_history(runs: Runs, job_ids: Iterable[int], keep: int) -> int:
    """Trim each job's history to its newest `keep` entries; returns how many were deleted."""
    total = 0
    for job_id in sorted(job_ids):
        async with runs.write() as conn:
            boundary = (
                select(job_history.c.id)
                .where(job_history.c.job_id == job_id)
                .order_by(job_history.c.id.desc())
                .offset(keep - 1)
                .limit(1)
                .scalar_subquery()
            )
            done = await conn.execute(
                delete(job_history).where(
                    job_history.c.job_id == job_id, job_history.c.id < boundary
                )
            )
        total += done.rowcount
    return total


async def delete_jobs_ended_before(runs: Runs, cutoff: datetime) -> int:
    """Delete Completed and Faulted jobs that ended before `cutoff` (their history and pending
    run-now requests go with them); returns how many."""
    total = 0
    while True:
        async with runs.write() as conn:
            ids = (
                select(jobs.c.id)
                .where(jobs.c.ended_at < cutoff, jobs.c.state.in_(("Completed", "Faulted")))
                .limit(200)
            )
            done = await conn.execute(delete(jobs).where(jobs.c.id.in_(ids)))
        total += done.rowcount
        if done.rowcount < 200:
            return total
