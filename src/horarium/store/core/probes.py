"""The store's questions of the health checks and the metrics: is the schema the one this
version migrates to, and how many executions are due that nobody holds. Both are cheap: one
row, and an indexed range."""

from __future__ import annotations

from datetime import datetime
from functools import cache

from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import func, or_, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.enums import JobState
from horarium.store.core.db import MIGRATIONS
from horarium.store.core.schema import job_executions, jobs


@cache
def _scripts() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config)


@cache
def head_revision() -> str | None:
    """The newest migration this version knows."""
    head: str | None = _scripts().get_current_head()
    return head


@cache
def known_revisions() -> frozenset[str]:
    """Every migration this version knows (a revision not among them is a newer version's)."""
    return frozenset(script.revision for script in _scripts().walk_revisions())


async def schema_revision(conn: AsyncConnection) -> str | None:
    """The migration the database is at (None: not migrated)."""
    result = await conn.execute(text("SELECT version_num FROM alembic_version"))
    revision = result.scalar()
    return None if revision is None else str(revision)


async def due_backlog(conn: AsyncConnection, now: datetime) -> int:
    """Executions due at `now` that no process holds: Enabled jobs whose next execution is due
    and unleased (or whose lease ran out), and retries, error actions and run-now requests
    due (a held one's `due_at` is its lease expiry, so `due_at <= now` is unheld)."""
    due_jobs = select(func.count()).where(
        jobs.c.next_execution_at <= now,
        jobs.c.state == JobState.ENABLED,
        or_(jobs.c.lease_owner.is_(None), jobs.c.lease_expires_at <= now),
    )
    due_runs = select(func.count()).where(job_executions.c.due_at <= now)
    first = (await conn.execute(due_jobs)).scalar_one()
    later = (await conn.execute(due_runs)).scalar_one()
    return int(first) + int(later)
