"""Helpers for the engine tests: a clock the test moves, a recording HTTP sink, and job rows
written the way the management API writes them."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.config import Settings
from horarium.model.names import CollectionName
from horarium.recurrence import plan
from horarium.store.core.schema import job_executions, job_history, jobs
from horarium.store.resources import collections as collections_store
from horarium.store.resources import jobs as jobs_store

T0 = datetime(2030, 1, 7, 9, 0, 0, tzinfo=UTC)  # a Monday


class FakeClock:
    """The engine's clock, moved by the test."""

    def __init__(self, start: datetime = T0) -> None:
        self.at = start

    def now(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> datetime:
        self.at += timedelta(**delta)
        return self.at

    def set(self, at: datetime) -> None:
        self.at = at


@dataclass
class Hit:
    path: str
    headers: dict[str, str]
    body: str
    at: datetime = field(default_factory=lambda: datetime.now(UTC))  # when it arrived


@dataclass
class Sink:
    """An HTTP server that records every request; `plan(path, statuses)` sets the answers a
    path gives in turn (the last one repeats); unplanned paths answer 200."""

    url: str = ""
    hits: list[Hit] = field(default_factory=list)
    planned: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    delay: float = 0.0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    answering: int = 0  # requests being answered now
    most_answering: int = 0  # the most answered at the same time

    async def wait_hits(self, n: int) -> None:
        """Until at least `n` requests have arrived (at most 10 s)."""
        async with asyncio.timeout(10):
            while len(self.hits) < n:
                self.arrived.clear()
                await self.arrived.wait()

    def plan(self, path: str, *statuses: int) -> str:
        self.planned[path] = list(statuses)
        return f"{self.url}{path}"

    def to(self, path: str) -> str:
        return f"{self.url}{path}"

    def on(self, path: str) -> list[Hit]:
        return [h for h in self.hits if h.path == path]

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.text()
        self.hits.append(Hit(request.path, dict(request.headers), body))
        self.arrived.set()
        self.answering += 1
        self.most_answering = max(self.most_answering, self.answering)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.answering -= 1
        statuses = self.planned.get(request.path) or [200]
        status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
        return web.Response(status=status, text=f"answer {status} from {request.path}")


def engine_settings(**changes: Any) -> Settings:
    values: dict[str, Any] = {
        "grace_period": 60.0,
        "lease_seconds": 30.0,
        "poll_interval": 0.05,
        "http_timeout": 5.0,
        "region": "Test Region",
    }
    values.update(changes)
    return Settings(**values)


class Store:
    """Writes jobs as the management API does, reads status and history as it would."""

    def __init__(self, db: AsyncEngine) -> None:
        self.db = db
        self._collection: int | None = None

    async def collection(self) -> int:
        if self._collection is None:
            async with self.db.begin() as conn:
                self._collection = await collections_store.insert_one(
                    conn,
                    CollectionName("sub", "rg", "coll"),
                    location="West US",
                    state="Enabled",
                    sku="Standard",
                    document={},
                    now=T0,
                )
        return self._collection

    async def add(self, name: str, properties: dict[str, Any], created: datetime = T0) -> int:
        """A job PUT at `created`: next execution = plan.first (none when Disabled)."""
        collection = await self.collection()
        state = properties.get("state", "Enabled")
        first = plan(properties, created=created).first if state == "Enabled" else None
        async with self.db.begin() as conn:
            return await jobs_store.insert_one(
                conn,
                collection_id=collection,
                name=name,
                definition=properties,
                state=state,
                next_execution_at=first,
                now=created,
            )

    async def set_state(self, job_id: int, state: str, now: datetime) -> None:
        """PATCH state (as the API does): disabling clears the next execution; enabling
        resumes at the next execution of the series at or after now."""
        async with self.db.begin() as conn:
            row = (await conn.execute(select(jobs).where(jobs.c.id == job_id))).one()
            next_at = None
            if state == "Enabled":
                next_at = plan(row.definition, created=row.schedule_set_at).at_or_after(now)
            await conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id)
                .values(
                    state=state,
                    next_execution_at=next_at,
                    version=jobs.c.version + 1,
                    updated_at=now,
                )
            )

    async def job(self, job_id: int) -> Any:
        async with self.db.connect() as conn:
            return (await conn.execute(select(jobs).where(jobs.c.id == job_id))).one()

    async def history(self, job_id: int) -> list[Any]:
        """Newest first, as the API lists it."""
        async with self.db.connect() as conn:
            return list(
                (
                    await conn.execute(
                        select(job_history)
                        .where(job_history.c.job_id == job_id)
                        .order_by(job_history.c.id.desc())
                    )
                ).all()
            )

    async def pending(self, job_id: int) -> list[Any]:
        async with self.db.connect() as conn:
            return list(
                (
                    await conn.execute(
                        select(job_executions).where(job_executions.c.job_id == job_id)
                    )
                ).all()
            )


def http(url: str, **action: Any) -> dict[str, Any]:
    """An Http action calling `url` (extra keys: retryPolicy, errorAction, …)."""
    return {"type": "Http", "request": {"uri": url, "method": "POST", "body": "hi"}, **action}
