"""A Suspended or Disabled collection runs nothing of its jobs — due executions, pending
retries, error actions and run-now requests alike — until it is enabled again; then what was
pending runs at once. Decided by the engine's claim (on SQLite and PostgreSQL), not only by the
API clearing the jobs' next executions."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.api import collection_ops, job_ops
from horarium.engine.scheduler import Scheduler
from horarium.model.names import CollectionName
from horarium.store.core.probes import due_backlog
from horarium.store.resources import collections as collections_store
from tests.engine.engine_support import T0, FakeClock, Sink, Store, http

COLLECTION = CollectionName("sub", "rg", "coll")


async def set_collection_state(db: AsyncEngine, state: str, now: datetime) -> None:
    """POST …/enable, …/disable, or a PATCH of the collection's state, as the API does it."""
    async with db.begin() as conn:
        await collection_ops.set_state(conn, COLLECTION, state, now)


async def backlog(db: AsyncEngine, now: datetime) -> int:
    """`horarium_due_backlog` as `/metrics` reads it."""
    async with db.connect() as conn:
        return await due_backlog(conn, now)


@pytest.mark.parametrize("paused", ["Suspended", "Disabled"])
async def test_a_pending_retry_waits_for_its_collection_and_runs_when_it_is_enabled(
    paused: str,
    store: Store,
    sink: Sink,
    clock: FakeClock,
    make_scheduler: Any,
    db: AsyncEngine,
) -> None:
    job = await store.add("flaky", {"action": http(sink.plan("/f", 500, 200))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()  # the first attempt fails; its retry is due in 30 s
    await set_collection_state(db, paused, clock.advance(seconds=5))

    clock.advance(minutes=10)  # the retry fell due long ago
    assert await scheduler.drain() == 0
    assert len(sink.on("/f")) == 1
    assert len(await store.pending(job)) == 1  # kept, not dropped
    assert await backlog(db, clock.now()) == 0  # /metrics: nothing a process may claim

    await set_collection_state(db, "Enabled", clock.advance(seconds=5))
    assert await backlog(db, clock.now()) == 1
    assert (await store.job(job)).state == "Enabled"  # the series' last execution goes on
    assert await scheduler.drain() == 1  # at once, however late
    completed, failed = await store.history(job)
    assert (completed.status, completed.retry_count) == ("Completed", 1)
    assert completed.execution_tag == failed.execution_tag
    assert completed.start_time == clock.now()
    row = await store.job(job)
    assert (row.state, row.execution_count, row.failure_count) == ("Completed", 2, 1)
    assert await store.pending(job) == []


async def test_a_run_now_request_waits_while_its_collection_is_suspended(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    await store.add(
        "hourly",
        {
            "startTime": (T0.replace(hour=10)).isoformat(),
            "action": http(sink.to("/now")),
            "recurrence": {"frequency": "Hour", "interval": 1},
        },
    )
    async with db.begin() as conn:
        await job_ops.run(conn, COLLECTION, "hourly", clock.now())
    await set_collection_state(db, "Suspended", clock.now())
    scheduler: Scheduler = make_scheduler()

    clock.advance(minutes=5)
    assert await scheduler.drain() == 0
    assert sink.on("/now") == []

    await set_collection_state(db, "Enabled", clock.advance(seconds=1))
    assert await scheduler.drain() == 1
    [hit] = sink.on("/now")
    assert hit.headers["x-ms-scheduler-expected-execution-time"].startswith("2030-01-07T09:00:00")


async def test_an_error_action_due_after_the_collection_was_suspended_waits_for_it(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    # The main action is answering when the collection is suspended; it fails, and its error
    # action (due at once) waits until the collection is enabled.
    sink.delay = 0.3
    job = await store.add(
        "fails",
        {
            "action": http(
                sink.plan("/main", 500),
                retryPolicy={"retryType": "None"},
                errorAction=http(sink.to("/fallback")),
            )
        },
    )
    scheduler: Scheduler = make_scheduler()
    running = asyncio.create_task(scheduler.drain())
    await sink.wait_hits(1)
    await set_collection_state(db, "Suspended", clock.now())
    await running
    assert sink.on("/fallback") == []
    [failed] = await store.history(job)
    assert (failed.action_name, failed.status) == ("MainAction", "Failed")

    clock.advance(minutes=1)
    assert await scheduler.drain() == 0
    await set_collection_state(db, "Enabled", clock.advance(seconds=1))
    sink.delay = 0
    assert await scheduler.drain() == 1
    assert len(sink.on("/fallback")) == 1
    assert (await store.job(job)).state == "Faulted"


async def test_the_engine_does_not_run_a_due_job_of_a_suspended_collection(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    # Only the collection's row says Suspended (its jobs still have their next executions, as
    # if the API's write had not reached them): the claim itself holds the job back.
    job = await store.add("due", {"action": http(sink.to("/due"))})
    collection = await store.collection()
    async with db.begin() as conn:
        await collections_store.update_one(conn, collection, T0, state="Suspended")
    scheduler: Scheduler = make_scheduler()
    assert await scheduler.drain() == 0
    assert sink.hits == []
    assert (await store.job(job)).next_execution_at == T0

    async with db.begin() as conn:
        await collections_store.update_one(conn, collection, T0, state="Enabled")
    assert await scheduler.drain() == 1
    assert (await store.job(job)).state == "Completed"
