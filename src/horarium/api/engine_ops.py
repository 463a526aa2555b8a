"""Beyond Azure: what the scheduler processes are doing, read from the database they share:
executions per minute (history end times), executions in flight per process (leases held), and
the due backlog (work due now that no process holds, apart from what disabled collections
hold back). It spans every subscription."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model import datetimes
from horarium.observe.loop_lag import LAG
from horarium.store.resources import engine_status
from horarium.store.resources.engine_status import MINUTE_TEXT

MINUTES = 60  # the window of executions per minute


async def _per_minute(conn: AsyncConnection, now: datetime) -> list[dict[str, Any]]:
    """Executions (history entries) that ended in each of the last MINUTES minutes, oldest
    first, by status; minutes without any are listed with zeros."""
    first = now.replace(second=0, microsecond=0) - timedelta(minutes=MINUTES - 1)
    counts = await engine_status.ended_per_minute(conn, first)
    series = []
    for i in range(MINUTES):
        at = first + timedelta(minutes=i)
        seen = counts.get(at.strftime(MINUTE_TEXT), {})
        series.append(
            {
                "minute": datetimes.format_instant(at),
                "completed": seen.get("Completed", 0),
                "failed": seen.get("Failed", 0),
                "postponed": seen.get("Postponed", 0),
                "skipped": seen.get("Skipped", 0),
            }
        )
    return series


async def _processes(conn: AsyncConnection, now: datetime) -> list[dict[str, Any]]:
    """Each process holding live leases: jobs whose due execution it runs, and continued
    executions (retries, error actions, run-now requests) it runs."""
    return [
        {
            "owner": holder.owner,
            "jobs": holder.jobs,
            "executions": holder.executions,
            "leaseExpiresAt": datetimes.format_instant(holder.lease_expires_at),
            "inFlight": holder.jobs + holder.executions,
        }
        for holder in await engine_status.lease_holders(conn, now)
    ]


async def _backlog(conn: AsyncConnection, now: datetime) -> dict[str, Any]:
    """Work due now that no live lease holds in Enabled collections: what the processes have
    not claimed yet; and apart, what collections that are not Enabled hold back (no process
    will claim it until they are enabled)."""
    backlog = await engine_status.due_backlog(conn, now)
    oldest = backlog.oldest_due
    return {
        "jobs": backlog.jobs,
        "executions": backlog.executions,
        "oldestDueTime": datetimes.format_instant(oldest) if oldest is not None else None,
        "heldByCollections": {"jobs": backlog.held_jobs, "executions": backlog.held_executions},
    }


async def status(conn: AsyncConnection, now: datetime) -> dict[str, Any]:
    processes = await _processes(conn, now)
    return {
        "time": datetimes.format_instant(now),
        "executionsPerMinute": await _per_minute(conn, now),
        "inFlight": sum(p["inFlight"] for p in processes),
        "dueBacklog": await _backlog(conn, now),
        "processes": processes,
        "eventLoopLag": LAG.worst(),
    }
