"""Readiness: whether this process can do its work — the database answers within a short time,
its schema is at the newest migration this version knows, and the scheduler runs when this
process should run one. `/readyz` answers from it (`horarium.api.probes`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.open_errors import explain
from horarium.store.probes import head_revision, schema_revision

log = logging.getLogger(__name__)

PING_TIMEOUT = 2.0  # seconds the database has to answer
REUSE_SECONDS = 1.0  # an answer serves the probes of the next second: one query a second at most


@dataclass(frozen=True)
class Problem:
    """What is not ready: an ARM-style code and a sentence (no host names or credentials: the
    probe is unauthenticated; the details go to the log)."""

    code: str
    message: str


class Readiness:
    """`engine_running`: None when this process runs no scheduler; else whether it runs."""

    def __init__(self, db: AsyncEngine, engine_running: Callable[[], bool] | None) -> None:
        self._db = db
        self._engine_running = engine_running
        self._lock = asyncio.Lock()
        self._checked_at = float("-inf")
        self._problems: list[Problem] = []

    async def problems(self) -> list[Problem]:
        """Nothing when ready; else what is not."""
        async with self._lock:
            if time.monotonic() - self._checked_at >= REUSE_SECONDS:
                self._problems = await self._check()
                self._checked_at = time.monotonic()
            return list(self._problems)

    async def _check(self) -> list[Problem]:
        problems = await self._database()
        if self._engine_running is not None and not self._engine_running():
            problems.append(
                Problem("SchedulerNotRunning", "The scheduler of this process is not running.")
            )
        return problems

    async def _database(self) -> list[Problem]:
        try:
            revision = await asyncio.wait_for(self._revision(), PING_TIMEOUT)
        except TimeoutError:
            log.warning("readiness: the database did not answer within %g s", PING_TIMEOUT)
            return [
                Problem(
                    "DatabaseUnreachable",
                    f"The database did not answer within {PING_TIMEOUT:g} s.",
                )
            ]
        except Exception as exc:
            reason = explain(exc, self._db.url.render_as_string(hide_password=True))
            log.warning("readiness: %s", reason or f"the database failed: {type(exc).__name__}")
            return [Problem("DatabaseUnreachable", "The database cannot be reached or used.")]
        head = head_revision()
        if revision != head:
            return [
                Problem(
                    "MigrationsNotApplied",
                    f"The database schema is at migration {revision or 'none'}; this version"
                    f" needs {head}.",
                )
            ]
        return []

    async def _revision(self) -> str | None:
        async with self._db.connect() as conn:
            return await schema_revision(conn)
