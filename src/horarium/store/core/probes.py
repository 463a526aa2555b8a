"""The store's questions of the health checks and the metrics: is the schema the one this
version migrates to, how many executions are due that a process may claim and nobody holds,
how many nodes beat. All are cheap: one row, and indexed ranges."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.enums import JobState
from horarium.store.core.revisions import REVISION
from horarium.store.core.schema import collection_stopped, job_executions, jobs, nodes


async def schema_revision(conn: AsyncConnection) -> str | None:
    """The migration the database is at (None: not migrated)."""
    result = await conn.execute(REVISION)
    revision = result.scalar()
    return None if revision is None else str(revision)


async def due_backlog(conn: AsyncConnection, now: datetime) -> int:
    """Executions due at `now` that a process may claim and none holds, in Enabled collections
    (a Suspended or Disabled one holds its work back: `engine_status.due_backlog` counts that
    apart): Enabled jobs whose next execution is due and unleased (or whose lease ran out), and
    retries, error actions and run-now requests due (a held one's `due_at` is its lease expiry,
    so `due_at <= now` is unheld)."""
    stopped = collection_stopped()
    due_jobs = select(func.count()).where(
        jobs.c.next_execution_at <= now,
        jobs.c.state == JobState.ENABLED,
        or_(jobs.c.lease_owner.is_(None), jobs.c.lease_expires_at <= now),
        ~stopped,
    )
    due_runs = (
        select(func.count())
        .select_from(job_executions)
        .join(jobs, jobs.c.id == job_executions.c.job_id)
        .where(job_executions.c.due_at <= now, ~stopped)
    )
    first = (await conn.execute(due_jobs)).scalar_one()
    later = (await conn.execute(due_runs)).scalar_one()
    return int(first) + int(later)


async def live_nodes(conn: AsyncConnection, now: datetime, node_timeout: float) -> int:
    """Nodes whose last beat is within `node_timeout` seconds of `now` (the beats' clock: the
    database's on PostgreSQL, where `now` is read from it)."""
    if conn.dialect.name == "postgresql":
        now = (await conn.execute(select(func.clock_timestamp()))).scalar_one()
    cutoff = now - timedelta(seconds=node_timeout)
    query = select(func.count()).where(nodes.c.last_beat >= cutoff)
    return int((await conn.execute(query)).scalar_one())
