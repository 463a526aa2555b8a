"""The text `/metrics` answers: the registry in Prometheus's text format, the database-wide
gauges read first — the due backlog and the live nodes (COUNTs over indexed ranges), at most
every `BACKLOG_SECONDS`, whatever the number of scrapes."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.observe import metrics
from horarium.store.core.probes import due_backlog, live_nodes

log = logging.getLogger(__name__)

BACKLOG_SECONDS = 5.0
BACKLOG_TIMEOUT = 2.0
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Exposition:
    def __init__(self, db: AsyncEngine, node_timeout: float = 15.0) -> None:
        """`node_timeout`: beats older than this are of nodes gone."""
        self._db = db
        self._node_timeout = node_timeout
        self._lock = asyncio.Lock()
        self._read_at = float("-inf")

    async def render(self) -> bytes:
        await self._refresh_backlog()
        return generate_latest(REGISTRY)

    async def _refresh_backlog(self) -> None:
        async with self._lock:
            if time.monotonic() - self._read_at < BACKLOG_SECONDS:
                return
            self._read_at = time.monotonic()
            try:
                backlog, nodes = await asyncio.wait_for(self._count(), BACKLOG_TIMEOUT)
            except Exception as exc:  # the database is gone or slow: the values are unknown
                log.warning("could not count the due backlog: %s", type(exc).__name__)
                metrics.DUE_BACKLOG.set(float("nan"))
                metrics.LIVE_NODES.set(float("nan"))
                return
            metrics.DUE_BACKLOG.set(backlog)
            metrics.LIVE_NODES.set(nodes)

    async def _count(self) -> tuple[int, int]:
        async with self._db.connect() as conn:
            now = datetime.now(UTC)
            return await due_backlog(conn, now), await live_nodes(conn, now, self._node_timeout)
