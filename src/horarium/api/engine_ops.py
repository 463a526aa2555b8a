"""Beyond Azure: what the scheduler processes are doing, read from the database they share:
executions per minute (history end times), executions in flight per process (leases held), and
the due backlog (work due now that no process holds). It spans every subscription."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from horarium.model import datetimes
from horarium.store.schema import job_executions, job_history, jobs

MINUTES = 60  # the window of executions per minute
_MINUTE_TEXT = "%Y-%m-%d %H:%M"  # how both databases spell a minute below


def _minute_of(conn: AsyncConnection) -> ColumnElement[str]:
    """A history entry's end minute as `YYYY-MM-DD HH:MM` text (UTC) in either database."""
    end = job_history.c.end_time
    if conn.dialect.name == "sqlite":
        return func.substr(end, 1, 16)  # stored as naive UTC `YYYY-MM-DD HH:MM:SS.ffffff`
    return func.to_char(func.timezone("UTC", end), "YYYY-MM-DD HH24:MI")


async def _per_minute(conn: AsyncConnection, now: datetime) -> list[dict[str, Any]]:
    """Executions (history entries) that ended in each of the last MINUTES minutes, oldest
    first, by status; minutes without any are listed with zeros."""
    first = now.replace(second=0, microsecond=0) - timedelta(minutes=MINUTES - 1)
    minute = _minute_of(conn).label("minute")
    query = (
        select(minute, job_history.c.status, func.count().label("n"))
        .where(job_history.c.end_time >= first)
        .group_by(minute, job_history.c.status)
    )
    counts: dict[str, dict[str, int]] = {}
    for row in await conn.execute(query):
        counts.setdefault(row.minute, {})[row.status] = int(row.n)
    series = []
    for i in range(MINUTES):
        at = first + timedelta(minutes=i)
        seen = counts.get(at.strftime(_MINUTE_TEXT), {})
        series.append(
            {
                "minute": datetimes.format_instant(at),
                "completed": seen.get("Completed", 0),
                "failed": seen.get("Failed", 0),
                "postponed": seen.get("Postponed", 0),
            }
        )
    return series


async def _processes(conn: AsyncConnection, now: datetime) -> list[dict[str, Any]]:
    """Each process holding live leases: jobs whose due execution it runs, and continued
    executions (retries, error actions, run-now requests) it runs."""
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
    found: dict[str, dict[str, Any]] = {}
    for key, query in (("jobs", held_jobs), ("executions", held_runs)):
        for owner, count, until in await conn.execute(query):
            entry = found.setdefault(
                owner, {"owner": owner, "jobs": 0, "executions": 0, "leaseExpiresAt": until}
            )
            entry[key] = int(count)
            entry["leaseExpiresAt"] = max(entry["leaseExpiresAt"], until)
    processes = sorted(found.values(), key=lambda p: str(p["owner"]))
    for process in processes:
        process["inFlight"] = process["jobs"] + process["executions"]
        process["leaseExpiresAt"] = datetimes.format_instant(process["leaseExpiresAt"])
    return processes


async def _backlog(conn: AsyncConnection, now: datetime) -> dict[str, Any]:
    """Work due now that no live lease holds: what the processes have not claimed yet."""
    j, e = jobs.c, job_executions.c
    due_jobs = select(func.count(), func.min(j.next_execution_at)).where(
        j.next_execution_at <= now,
        j.state == "Enabled",
        or_(j.lease_owner.is_(None), j.lease_expires_at <= now),
    )
    due_runs = select(func.count(), func.min(e.due_at)).where(e.due_at <= now)
    jobs_due, jobs_oldest = (await conn.execute(due_jobs)).one()
    runs_due, runs_oldest = (await conn.execute(due_runs)).one()
    oldest = min((t for t in (jobs_oldest, runs_oldest) if t is not None), default=None)
    return {
        "jobs": int(jobs_due),
        "executions": int(runs_due),
        "oldestDueTime": datetimes.format_instant(oldest) if oldest is not None else None,
    }


async def status(conn: AsyncConnection, now: datetime) -> dict[str, Any]:
    processes = await _processes(conn, now)
    return {
        "time": datetimes.format_instant(now),
        "executionsPerMinute": await _per_minute(conn, now),
        "inFlight": sum(p["inFlight"] for p in processes),
        "dueBacklog": await _backlog(conn, now),
        "processes": processes,
    }
