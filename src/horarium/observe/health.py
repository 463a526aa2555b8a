"""Readiness: whether this process can do its work — the database answers within a short time,
its schema is at the newest migration this version knows, and the scheduler runs when this
process should run one. `/readyz` answers from it (`horarium.api.probes`), and `/readyz?verbose`
also from the node's view of the cluster (`NodeView`)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.open_errors import explain
from horarium.store.core.probes import schema_revision
from horarium.store.core.revisions import head_revision
from horarium.store.resources import engine_status
from horarium.store.resources.engine_status import NodeRow

log = logging.getLogger(__name__)

PING_TIMEOUT = 2.0  # seconds the database has to answer
REUSE_SECONDS = 1.0  # an answer serves the probes of the next second: one query a second at most
MIN_FREE = 64 * 1024  # bytes a SQLite database's disk needs free to count as writable


@dataclass(frozen=True)
class Problem:
    """What is not ready: an ARM-style code and a sentence (no host names or credentials: the
    probe is unauthenticated; the details go to the log)."""

    code: str
    message: str


@dataclass(frozen=True)
class EngineState:
    """This process's scheduler: its node id (the lease owner id, `host:pid:random`), and
    whether its connection listening for the API's writes is open (None: the database delivers
    no notifications, SQLite)."""

    node: str
    listening: bool | None
    holding_off: str | None = None  # why it claims no work (None: it claims)
    clock_offset: float | None = None  # the database's clock less this host's, seconds


@dataclass(frozen=True)
class NodeView:
    """The cluster as this process sees it. `heartbeat_age`, `leases_held` and `live_nodes`
    are None when the database could not be read (or, the first two, when this process runs
    no scheduler)."""

    node: str | None
    host: str
    pid: int
    roles: Sequence[str]
    database_reachable: bool
    listening: bool | None
    heartbeat_age: float | None
    leases_held: int | None
    live_nodes: Sequence[NodeRow] | None
    now: datetime
    holding_off: str | None = None
    clock_offset: float | None = None


class Readiness:
    """`engine_running`: None when this process runs no scheduler; else whether it runs.
    `roles`: what this process does ("api", "engine"); `engine`: its scheduler's state (None:
    none runs); `node_timeout`: beats older than this are of nodes gone."""

    def __init__(
        self,
        db: AsyncEngine,
        engine_running: Callable[[], bool] | None,
        *,
        roles: Sequence[str] = (),
        engine: Callable[[], EngineState | None] | None = None,
        node_timeout: float = 15.0,
    ) -> None:
        self._db = db
        self._engine_running = engine_running
        self._roles = tuple(roles)
        self._engine = engine
        self._node_timeout = timedelta(seconds=node_timeout)
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

    async def view(self, problems: Sequence[Problem]) -> NodeView:
        """This node's view, `problems` being what `problems()` answered."""
        engine = self._engine() if self._engine is not None else None
        reachable = not any(p.code == "DatabaseUnreachable" for p in problems)
        offset = engine.clock_offset if engine is not None else None
        now = datetime.now(UTC) + timedelta(seconds=offset or 0)  # the beats' clock
        seen: list[NodeRow] | None = None
        leases: int | None = None
        if reachable:
            try:
                async with asyncio.timeout(PING_TIMEOUT), self._db.connect() as conn:
                    seen = await engine_status.nodes_seen(conn)
                    if engine is not None:
                        leases = await engine_status.leases_of(conn, engine.node, now)
            except Exception as exc:
                log.warning("readiness: could not read the nodes (%s)", type(exc).__name__)
                reachable = False
        mine = [n for n in seen or () if engine is not None and n.id == engine.node]
        return NodeView(
            node=engine.node if engine is not None else None,
            host=socket.gethostname(),
            pid=os.getpid(),
            roles=self._roles,
            database_reachable=reachable,
            listening=engine.listening if engine is not None else None,
            heartbeat_age=beat_age(now, mine[0].last_beat) if mine else None,
            leases_held=leases,
            live_nodes=None
            if seen is None
            else [n for n in seen if now - n.last_beat <= self._node_timeout],
            now=now,
            holding_off=engine.holding_off if engine is not None else None,
            clock_offset=offset,
        )

    async def _check(self) -> list[Problem]:
        problems = await self._database()
        if self._engine_running is not None and not self._engine_running():
            problems.append(
                Problem("SchedulerNotRunning", "The scheduler of this process is not running.")
            )
        engine = self._engine() if self._engine is not None else None
        if engine is not None and engine.holding_off is not None:
            problems.append(Problem("NotClaiming", engine.holding_off))
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
        return (
            _sqlite_writable(self._db.url.database)
            if self._db.url.get_backend_name() == "sqlite"
            else []
        )

    async def _revision(self) -> str | None:
        async with self._db.connect() as conn:
            return await schema_revision(conn)


def _sqlite_writable(database: str | None) -> list[Problem]:
    """A SQLite file that cannot be written: its disk full (less than `MIN_FREE` left), or
    the file or its folder read-only. Reads still work; every write fails (503)."""
    if not database or database == ":memory:":
        return []
    path = Path(database)
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return []
    if free < MIN_FREE:
        log.warning("readiness: the database's disk has %d bytes free", free)
        return [
            Problem("DatabaseCannotWrite", "The database's disk is full: nothing can be stored.")
        ]
    if not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
        return [Problem("DatabaseCannotWrite", "The database file or its folder is read-only.")]
    return []


def beat_age(now: datetime, then: datetime) -> float:
    """Seconds since `then`, never negative: `now` carries the estimated clock offset, whose
    error of a few milliseconds could put a beat just written in the future."""
    return max(0.0, (now - then).total_seconds())
