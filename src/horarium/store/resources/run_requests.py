"""The management API's SQL for executions: run-now requests, and whether a series still has an
execution to continue (a retry or the error action the engine has not run yet)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.store.core.schema import job_executions, jobs
from horarium.store.core.tags import is_series_tag, new_tag, series_tag
from horarium.store.runs.vocabulary import ExecutionKind, Phase

# Backfill rows are due one microsecond apart, so claims take them oldest first.
_BACKFILL_STEP = timedelta(microseconds=1)


async def request_run(conn: AsyncConnection, job_id: int, at: datetime) -> None:
    """Ask for one immediate execution of job row `job_id`, inside the caller's transaction.

    The run is outside the job's series: `repeatCount` 0, `expectedExecutionTime` = `at`, the
    schedule and the state are left as they are. The engine picks it up at its next look (the
    API may call `horarium.engine.service.wake()` after committing to make that immediate).
    """
    version = select(jobs.c.version).where(jobs.c.id == job_id).scalar_subquery()
    await conn.execute(
        insert(job_executions).values(
            job_id=job_id,
            execution_tag=new_tag(),
            kind=ExecutionKind.RUN_NOW,
            repeat_count=0,
            expected_at=at,
            job_version=version,
            phase=Phase.MAIN,
            attempt=0,
            due_at=at,
            lease_owner=None,
            created_at=at,
        )
    )


async def request_backfill(
    conn: AsyncConnection,
    job_id: int,
    version: int,
    schedule_set_at: datetime,
    instants: Sequence[datetime],
    at: datetime,
) -> None:
    """Queue one execution of job row `job_id` per instant (kind `backfill`), inside the
    caller's transaction: `expectedExecutionTime` the instant, `repeatCount` 0 (outside the
    series: they do not count toward `recurrence.count` nor change the state), the execution
    tag of the occurrence (`series_tag` with repeat 0: the same occurrence backfilled again
    carries the same tag)."""
    if not instants:
        return
    await conn.execute(
        insert(job_executions),
        [
            {
                "job_id": job_id,
                "execution_tag": series_tag(job_id, schedule_set_at, 0, instant),
                "kind": ExecutionKind.BACKFILL,
                "repeat_count": 0,
                "expected_at": instant,
                "job_version": version,
                "phase": Phase.MAIN,
                "attempt": 0,
                "due_at": at + i * _BACKFILL_STEP,
                "lease_owner": None,
                "created_at": at,
            }
            for i, instant in enumerate(instants)
        ],
    )


async def backfills_pending(conn: AsyncConnection, job_id: int) -> int:
    """How many backfill executions of job row `job_id` have not finished (queued, running or
    waiting for a retry)."""
    found = await conn.execute(
        select(func.count())
        .select_from(job_executions)
        .where(
            job_executions.c.job_id == job_id,
            job_executions.c.kind == ExecutionKind.BACKFILL,
        )
    )
    return int(found.scalar_one())


async def run_pending(conn: AsyncConnection, job_id: int) -> bool:
    """Whether job row `job_id` has a run-now request no process has started yet (not claimed,
    no attempt made). A request whose first attempt was made, and is running or waits for a
    retry, does not count."""
    found = await conn.execute(
        select(job_executions.c.id)
        .where(
            job_executions.c.job_id == job_id,
            job_executions.c.kind == ExecutionKind.RUN_NOW,
            job_executions.c.phase == Phase.MAIN,
            job_executions.c.attempt == 0,
            job_executions.c.lease_owner.is_(None),
        )
        .limit(1)
    )
    return found.first() is not None


async def continues_series(conn: AsyncConnection, job_id: int, schedule_set_at: datetime) -> bool:
    """Whether an execution of the job's current series (the one set at `schedule_set_at`) is
    still to continue: a retry or the error action pending or running. Run-now requests, and
    executions of a series the job has since left, do not count."""
    rows = await conn.execute(
        select(
            job_executions.c.execution_tag,
            job_executions.c.repeat_count,
            job_executions.c.expected_at,
        ).where(job_executions.c.job_id == job_id, job_executions.c.kind != ExecutionKind.RUN_NOW)
    )
    return any(
        is_series_tag(row.execution_tag, job_id, schedule_set_at, row.repeat_count, row.expected_at)
        for row in rows
    )
