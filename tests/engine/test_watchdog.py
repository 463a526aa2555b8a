"""The engine's backstop time limit: an action that outlives it ends as a failed attempt (the
history says so), without cancelling anything else; an outside cancellation still wins."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.engine.attempt import run_attempt
from horarium.engine.scheduler import Scheduler
from horarium.engine.watchdog import Watchdog
from horarium.store.runs.vocabulary import Claimed
from tests.engine.engine_support import FakeClock, Sink, Store, engine_settings, http


async def claim_one(
    store: Store, sink: Sink, db: AsyncEngine, clock: FakeClock, actions: Actions
) -> Claimed:
    await store.add("slow", {"action": http(sink.to("/slow"))})
    scheduler = Scheduler(db, engine_settings(), actions, clock=clock)
    [claimed] = await scheduler.runs.claim(
        clock.now(),
        10,
        lambda: clock.now() + timedelta(seconds=30),
        scheduler.decider.at(clock.now()),
    )
    return claimed


async def test_an_action_past_the_time_limit_fails_with_a_clear_message(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    sink.delay = 3  # the HTTP action's own timeout (5 s) would come later
    claimed = await claim_one(store, sink, db, clock, actions)
    attempt = await run_attempt(actions, claimed, clock, "r", Watchdog(0.2, tick=0.05))
    assert not attempt.succeeded
    assert attempt.message == "The action did not finish within 0.2 s."
    await asyncio.sleep(0)  # the task was not left cancelled: it goes on awaiting normally
    quick = Watchdog(5, tick=0.05)
    sink.delay = 0
    again = await run_attempt(actions, claimed, clock, "r", quick)
    assert again.succeeded
    await asyncio.sleep(0.1)  # a later tick finds nothing to cancel


async def test_cancelling_the_engine_still_cancels_a_watched_attempt(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    sink.delay = 3
    claimed = await claim_one(store, sink, db, clock, actions)
    task = asyncio.create_task(run_attempt(actions, claimed, clock, "r", Watchdog(30)))
    await sink.wait_hits(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
