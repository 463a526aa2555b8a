"""The management API's SQL for what the engine processes are doing, read from the database
they share: history entries per minute, leases held per process, work due that nobody holds,
and the nodes' heartbeats (`/readyz?verbose`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from horarium.model.enums import CollectionState, JobState
from horarium.store.core.schema import job_collections, job_executions, job_history, jobs, nodes

MINUTE_TEXT = "%Y-%m-%d %H:%M"  # how `ended_per_minute` spells a minute


def _minute_of(conn: AsyncConnection) -> ColumnElement[str]:
    """A history entry's end minute as `YYYY-MM-DD HH:MM` text (UTC) in either database."""
    end = job_history.c.end_time
    if conn.dialect.name == "sqlite":
        return func.substr(end, 1, 16)  # stored as naive UTC `YYYY-MM-DD HH:MM:SS.ffffff`
    return func.to_char(func.timezone("UTC", end), "YYYY-MM-DD HH24:MI")


async def ended_per_minute(conn: AsyncConnection, since: datetime) -> dict[str, dict[str, int]]:
    """History entries that ended at or after `since`: minute (MINUTE_TEXT) -> status -> count."""
    minute = _minute_of(conn).label("minute")
    query = (
        select(minute, job_history.c.status, func.count().label("n"))
        .where(job_history.c.end_time >= since)
        .group_by(minute, job_history.c.status)
    )
    counts: dict[str, dict[str, int]] = {}
    for row in await conn.execute(query):
        counts.setdefault(row.minute, {})[row.status] = int(row.n)
    return counts


@dataclass
class Holder:
    """A process holding live leases: on due jobs (first attempts), on job_executions rows
    (retries, error actions, run-now requests), and when its latest lease runs out."""

    owner: str
    jobs: int
    executions: int
    lease_expires_at: datetime


async def lease_holders(conn: AsyncConnection, now: datetime) -> list[Holder]:
    """Every process holding a lease that has not run out at `now`, by owner."""
    j, e = jobs.c, job_executions.c
    held_jobs = (
        select(j.lease_owner, func.count(), func.max(j.lease_expires_at))
        .where(j.lease_owner.is_not(None), j.lease_expires_at > now)
        .group_by(j.lease_owner)
    )
    held_runs = (
        select(e.lease_owner, func.count(), func.max(e.due_at))
        .where(e.lease_owner.is_not(None), e.due_at > now)
        .group_by(e.lease_owner)
    )
    found: dict[str, Holder] = {}
    for owner, count, until in await conn.execute(held_jobs):
        found[owner] = Holder(owner, int(count), 0, until)
    for owner, count, until in await conn.execute(held_runs):
        holder = found.setdefault(owner, Holder(owner, 0, 0, until))
        holder.executions = int(count)
        holder.lease_expires_at = max(holder.lease_expires_at, until)
    return sorted(found.values(), key=lambda h: h.owner)


@dataclass(frozen=True)
class Backlog:
    """Work due that no live lease holds, in Enabled collections (a process may claim it),
    and how much more is held by collections that are not Enabled (no process claims it)."""

    jobs: int
    executions: int
    oldest_due: datetime | None
    held_jobs: int
    held_executions: int


async def due_backlog(conn: AsyncConnection, now: datetime) -> Backlog:
    j, e, c = jobs.c, job_executions.c, job_collections.c
    enabled = (c.state == CollectionState.ENABLED).label("enabled")
    due_jobs = (
        select(enabled, func.count(), func.min(j.next_execution_at))
        .join(job_collections, c.id == j.collection_id)
        .where(
            j.next_execution_at <= now,
            j.state == JobState.ENABLED,
            or_(j.lease_owner.is_(None), j.lease_expires_at <= now),
        )
        .group_by(enabled)
    )
    due_runs = (
        select(enabled, func.count(), func.min(e.due_at))
        .join(jobs, j.id == e.job_id)
        .join(job_collections, c.id == j.collection_id)
        .where(e.due_at <= now)
        .group_by(enabled)
    )
    counts: dict[tuple[str, bool], int] = {}
    oldest: datetime | None = None
    for kind, query in (("jobs", due_jobs), ("runs", due_runs)):
        for claimable, count, first in await conn.execute(query):
            counts[kind, bool(claimable)] = int(count)
            if claimable and first is not None:
                oldest = first if oldest is None else min(oldest, first)
    return Backlog(
        counts.get(("jobs", True), 0),
        counts.get(("runs", True), 0),
        oldest,
        counts.get(("jobs", False), 0),
        counts.get(("runs", False), 0),
    )


@dataclass(frozen=True)
class NodeRow:
    """An engine process's row in `nodes` (`store.runs.nodes`)."""

    id: str
    host: str
    pid: int
    version: str
    started: datetime
    last_beat: datetime
    schema_revision: str | None  # the newest migration its code knows
    clock_offset: float | None  # the database's clock less its host's, seconds


async def nodes_seen(conn: AsyncConnection) -> list[NodeRow]:
    """Every row of `nodes`, by id (live or not: the caller compares the beats)."""
    n = nodes.c
    query = select(
        n.id, n.host, n.pid, n.version, n.started, n.last_beat, n.schema_revision, n.clock_offset
    ).order_by(n.id)
    return [NodeRow(*row) for row in await conn.execute(query)]


async def leases_of(conn: AsyncConnection, owner: str, now: datetime) -> int:
    """The leases `owner` holds that have not run out at `now` (due jobs and continued
    executions)."""
    j, e = jobs.c, job_executions.c
    held_jobs = select(func.count()).where(j.lease_owner == owner, j.lease_expires_at > now)
    held_runs = select(func.count()).where(e.lease_owner == owner, e.due_at > now)
    return int((await conn.execute(held_jobs)).scalar_one()) + int(
        (await conn.execute(held_runs)).scalar_one()
    )
