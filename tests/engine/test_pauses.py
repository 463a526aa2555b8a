"""Pausing (Horarium extension): a Disabled job or collection with `pause.until` is enabled
again by the engine at that instant; the executions that fell due meanwhile are decided as
missed ones (the latest runs once, the others are Postponed). On SQLite and PostgreSQL, through
the API's operations and the engine's pause task."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.api import collection_ops, job_ops
from horarium.engine.pauses import end_pauses_once
from horarium.engine.scheduler import Scheduler
from horarium.model.actions import WireStyle
from horarium.model.errors import BadRequest
from horarium.model.names import CollectionName
from horarium.store.runs.pauses import Ended, next_end
from tests.engine.engine_support import T0, FakeClock, Sink, Store, http

COLLECTION = CollectionName("sub", "rg", "coll")
STYLE = WireStyle()


def _iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


async def _put_minute_job(db: AsyncEngine, sink: Sink, now: datetime) -> dict[str, Any]:
    body = {
        "properties": {
            "startTime": _iso(T0),
            "action": http(sink.to("/minute")),
            "recurrence": {"frequency": "Minute", "interval": 1},
        }
    }
    async with db.begin() as conn:
        _, job = await job_ops.put(conn, COLLECTION, "minute", body, STYLE, now)
    return job


async def _patch_job(db: AsyncEngine, body: dict[str, Any], now: datetime) -> dict[str, Any]:
    async with db.begin() as conn:
        return await job_ops.patch(conn, COLLECTION, "minute", body, STYLE, now)


async def test_a_paused_job_is_enabled_at_until_and_what_fell_due_meanwhile_is_missed(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    await store.collection()
    await _put_minute_job(db, sink, T0)
    scheduler: Scheduler = make_scheduler()
    assert await scheduler.drain() == 1  # T0

    until = T0 + timedelta(minutes=5)
    pause = {"until": _iso(until), "reason": "database maintenance"}
    paused = await _patch_job(
        db, {"properties": {"state": "Disabled", "pause": pause}}, clock.advance(seconds=30)
    )
    assert paused["properties"]["state"] == "disabled"
    assert paused["properties"]["pause"] == pause  # when it began is not shown
    assert await next_end(db) == until

    clock.set(until - timedelta(seconds=1))
    assert await end_pauses_once(db, clock) == Ended()
    assert await scheduler.drain() == 0

    clock.set(until + timedelta(seconds=10))
    assert await end_pauses_once(db, clock) == Ended(jobs=1)
    assert await next_end(db) is None
    async with db.connect() as conn:
        shown = await job_ops.get(conn, COLLECTION, "minute", STYLE)
    assert shown["properties"]["state"] == "enabled"
    assert "pause" not in shown["properties"]

    assert await scheduler.drain() == 1  # the latest (T0+5 min) runs once
    history = await store.history(1)
    ran, *postponed = history[:5]
    assert (ran.status, ran.expected_execution_time) == ("Completed", until)
    assert [h.status for h in postponed] == ["Postponed"] * 4  # T0+1 … T0+4 min
    assert sorted(h.expected_execution_time for h in postponed) == [
        T0 + timedelta(minutes=m) for m in (1, 2, 3, 4)
    ]
    assert len(history) == 6  # and the first run at T0
    assert len(sink.on("/minute")) == 2


async def test_a_pause_is_refused_on_a_job_that_is_not_disabled_and_enabling_ends_it(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine
) -> None:
    await store.collection()
    await _put_minute_job(db, sink, T0)
    until = _iso(T0 + timedelta(hours=1))
    with pytest.raises(BadRequest, match=r"^properties\.pause: only a Disabled job can be"):
        await _patch_job(db, {"properties": {"pause": {"until": until}}}, T0)

    body = {"properties": {"state": "Disabled", "pause": {"until": until}}}
    await _patch_job(db, body, T0)
    enabled = await _patch_job(db, {"properties": {"state": "enabled"}}, clock.advance(minutes=1))
    assert enabled["properties"]["state"] == "enabled"
    assert "pause" not in enabled["properties"]
    assert await next_end(db) is None


async def test_a_paused_collection_and_its_jobs_are_enabled_at_until(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    await store.collection()
    await _put_minute_job(db, sink, T0)
    scheduler: Scheduler = make_scheduler()
    assert await scheduler.drain() == 1

    until = T0 + timedelta(minutes=3)
    pause = {"until": _iso(until), "reason": "quarter close"}
    async with db.begin() as conn:
        collection = await collection_ops.patch(
            conn,
            COLLECTION,
            {"properties": {"state": "Disabled", "pause": pause}},
            clock.advance(seconds=30),
        )
    assert collection["properties"]["pause"] == pause
    assert (await store.job(1)).state == "Disabled"

    clock.set(until + timedelta(seconds=1))
    assert await end_pauses_once(db, clock) == Ended(collections=1)
    async with db.connect() as conn:
        shown = await collection_ops.get(conn, COLLECTION)
    assert shown["properties"]["state"] == "Enabled"
    assert "pause" not in shown["properties"]
    assert (await store.job(1)).state == "Enabled"
    assert await scheduler.drain() == 1
    statuses = [h.status for h in await store.history(1)]
    assert statuses == ["Completed", "Postponed", "Postponed", "Completed"]
