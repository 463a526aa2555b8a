"""The text `/metrics` answers: the registry in Prometheus's text format, the due backlog read
first (one COUNT over indexed ranges, at most every `BACKLOG_SECONDS`, whatever the number of
scrapes)."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.observe import metrics
from horarium.store.core.probes import due_backlog

log = logging.getLogger(__name__)

BACKLOG_SECONDS = 5.0
BACKLOG_TIMEOUT = 2.0
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Exposition:
    def __init__(self, db: AsyncEngine) -> None:
        self._db = db
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
                count = await asyncio.wait_for(self._count(), BACKLOG_TIMEOUT)
            except Exception as exc:  # the database is gone or slow: the value is unknown
                log.warning("could not count the due backlog: %s", type(exc).__name__)
                metrics.DUE_BACKLOG.set(float("nan"))
                return
            metrics.DUE_BACKLOG.set(count)

    async def _count(self) -> int:
        async with self._db.connect() as conn:
            return await due_backlog(conn, datetime.now(UTC))
