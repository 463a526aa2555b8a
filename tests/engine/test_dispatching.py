"""The dispatcher's flow: more due work than slots (a ready batch waits for slots, never more
than `max_in_flight` run at once), stopping with executions claimed but not started, and a
round that wakes a little before a job falls due."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.engine.dispatcher import LOOKAHEAD
from horarium.engine.scheduler import Scheduler
from horarium.store.core.schema import job_history, jobs
from horarium.store.runs.vocabulary import Claimed
from tests.engine.engine_support import T0, FakeClock, Sink, Store, engine_settings, http


async def test_more_due_jobs_than_slots_all_run_once_never_more_than_max_in_flight_at_once(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    sink.delay = 0.01
    for i in range(150):
        await store.add(f"j{i}", {"action": http(sink.to(f"/j{i}"))})
    settings = engine_settings(batch_size=10, max_in_flight=25)
    scheduler = Scheduler(db, settings, actions, clock=clock)

    assert await scheduler.drain() == 150

    assert sorted(h.path for h in sink.hits) == sorted(f"/j{i}" for i in range(150))
    assert 1 < sink.most_answering <= 25
    async with db.connect() as conn:
        done = (
            await conn.execute(select(func.count()).where(jobs.c.state == "Completed"))
        ).scalar()
        entries = (await conn.execute(select(func.count()).select_from(job_history))).scalar()
    assert (done, entries) == (150, 150)


async def test_stopping_hands_back_executions_claimed_but_not_started(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    sink.delay = 30  # the first three never answer in time: the rest wait for a slot
    ids = [await store.add(f"j{i}", {"action": http(sink.to(f"/j{i}"))}) for i in range(8)]
    # Under 10 slots none is reserved: one collection, new and hung, may fill every one.
    settings = engine_settings(batch_size=3, max_in_flight=3, lease_seconds=300, drain_seconds=0.1)
    first = Scheduler(db, settings, actions, clock=clock, owner="first")
    first.start()
    await sink.wait_hits(3)

    async def leased() -> int:
        async with db.connect() as conn:
            count = select(func.count()).where(jobs.c.lease_owner == "first")
            return int((await conn.execute(count)).scalar_one())

    for _ in range(100):  # the round after the slots filled claims the ready batch (at most 10 s)
        if await leased() >= 6:
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.1)  # a later round claims nothing more
    assert await leased() == 6  # three running, three ready (the slots plus one batch); two wait
    assert len(sink.hits) == 3
    await first.stop()  # running attempts get drain_seconds

    for job in ids:
        row = await store.job(job)
        assert row.lease_expires_at is None or row.lease_expires_at <= clock.now()  # handed back
    sink.delay = 0
    second = Scheduler(db, settings, actions, clock=clock, owner="second")
    assert await second.drain() == 8  # no need to wait for the 300 s leases
    for job in ids:
        assert (await store.job(job)).state == "Completed"


async def test_a_job_just_beyond_the_rounds_look_ahead_runs_at_its_time_not_a_poll_later(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    # The round's claim runs a hair before the job is within its look-ahead (event-loop timers
    # may fire up to a millisecond early), so it finds nothing; when the claim returns, the job
    # is within the look-ahead. The dispatcher must look again by the job's due time, not
    # sleep a whole poll interval (here 60 s).
    await store.add("soon", {"action": http(sink.to("/soon"))})
    clock.set(T0 - LOOKAHEAD - timedelta(microseconds=500))
    scheduler = Scheduler(db, engine_settings(poll_interval=60), actions, clock=clock)
    claim = scheduler.runs.claim

    async def claim_taking_a_millisecond(*args: Any, **kwargs: Any) -> list[Claimed]:
        found = await claim(*args, **kwargs)
        clock.advance(milliseconds=1)
        return found

    scheduler.runs.claim = claim_taking_a_millisecond  # type: ignore[method-assign]
    scheduler.start()
    try:
        await sink.wait_hits(1)  # at most 10 s, far less than the poll interval
    finally:
        await scheduler.stop()
    assert [h.path for h in sink.hits] == ["/soon"]


async def test_stopping_during_a_claim_hands_back_what_it_claimed(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    # On SQLite a claim commits on the store's thread even if its caller is cancelled: stopping
    # lets the round finish and hands the claimed executions back, rather than leave them
    # leased to a process that is gone until their leases run out.
    job = await store.add("claimed", {"action": http(sink.to("/c"))})
    settings = engine_settings(lease_seconds=300)
    first = Scheduler(db, settings, actions, clock=clock, owner="first")
    claim = first.runs.claim
    claimed, release = asyncio.Event(), asyncio.Event()

    async def slow_claim(*args: Any, **kwargs: Any) -> list[Claimed]:
        found = await claim(*args, **kwargs)
        if found:
            claimed.set()
            await release.wait()  # the round is still under way when the stop comes
        return found

    stop_dispatcher = first.dispatcher.stop

    async def stop_then_release() -> None:
        # The scheduler's other parts stop first (on PostgreSQL closing the listener takes a
        # round trip); the claim returns only once the dispatcher is stopping.
        stopping = asyncio.ensure_future(stop_dispatcher())
        await asyncio.sleep(0)  # its first step marks it stopping
        assert first.dispatcher.stopping
        release.set()
        await stopping

    first.runs.claim = slow_claim  # type: ignore[method-assign]
    first.dispatcher.stop = stop_then_release  # type: ignore[method-assign]
    first.start()
    await asyncio.wait_for(claimed.wait(), 10)
    await first.stop()
    assert sink.hits == []
    row = await store.job(job)
    assert row.lease_expires_at is not None and row.lease_expires_at <= clock.now()

    second = Scheduler(db, settings, actions, clock=clock, owner="second")
    assert await second.drain() == 1  # at once, not after the 300 s lease
    assert (await store.job(job)).state == "Completed"
