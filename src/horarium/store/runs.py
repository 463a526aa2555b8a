"""Run-now requests (`POST …/jobs/{job}/run`): the API records one, the engine executes it.

Placeholder until the execution engine lands: the engine replaces the body.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection


async def request_run(conn: AsyncConnection, job_id: int, at: datetime) -> None:
    """Ask for one immediate execution of job row `job_id`, inside the caller's transaction."""
    return None
