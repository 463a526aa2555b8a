"""Nodes: each engine process beats its row in `nodes`; the executions of a node whose beat is
older than the node timeout are taken over by another node at once, on any host — long before
their leases run out — and a node that stops removes its row."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.engine.nodes import NodeKeeper, this_node
from horarium.engine.scheduler import Scheduler
from horarium.store.core.schema import nodes
from horarium.store.runs.store import Runs
from tests.engine.engine_support import FakeClock, Sink, Store, engine_settings, http

LEASE = timedelta(minutes=5)


def keeper(runs: Runs, clock: FakeClock, woken: list[int] | None = None) -> NodeKeeper:
    calls = woken if woken is not None else []
    return NodeKeeper(
        runs.nodes(this_node(runs.owner, clock)), clock, 15.0, lambda: calls.append(1)
    )


async def beats(db: AsyncEngine) -> dict[str, Any]:
    async with db.connect() as conn:
        return dict((await conn.execute(select(nodes.c.id, nodes.c.last_beat))).all())


async def node_ids(db: AsyncEngine) -> list[str]:
    async with db.connect() as conn:
        return sorted((await conn.execute(select(nodes.c.id))).scalars())


async def test_a_node_that_stopped_beating_has_its_executions_taken_over_at_once(
    db: AsyncEngine, store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add("held", {"action": http(sink.to("/held"))})
    decider = make_scheduler().decider
    dead = Runs(db, "other-host:4242:deadbeef")  # another host: no pid to look at
    alive = Runs(db, "this-host:1:cafecafe")
    await keeper(dead, clock).once()
    woken: list[int] = []
    survivor = keeper(alive, clock, woken)
    await survivor.once()
    assert await node_ids(db) == ["other-host:4242:deadbeef", "this-host:1:cafecafe"]
    assert (
        len(await dead.claim(clock.now(), 10, lambda: clock.now() + LEASE, decider.at(clock.now())))
        == 1
    )

    clock.advance(seconds=10)  # within the node timeout: nothing happens
    await survivor.once()
    assert (await store.job(job)).lease_owner == "other-host:4242:deadbeef"
    assert woken == []

    clock.advance(seconds=10)  # 20 s without a beat, the lease has minutes to go
    await survivor.once()
    row = await store.job(job)
    assert row.lease_expires_at is not None and row.lease_expires_at <= clock.now()
    assert await node_ids(db) == ["this-host:1:cafecafe"]
    assert woken == [1]
    claimed = await alive.claim(
        clock.now(), 10, lambda: clock.now() + LEASE, decider.at(clock.now())
    )
    assert [c.job.id for c in claimed] == [job]  # the same execution, run again
    await dead.close()
    await alive.close()


async def test_a_node_taken_for_gone_beats_again_and_says_its_executions_were_taken(
    db: AsyncEngine,
    store: Store,
    sink: Sink,
    clock: FakeClock,
    make_scheduler: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await store.add("held", {"action": http(sink.to("/held"))})
    decider = make_scheduler().decider
    paused = Runs(db, "far:7:aaaaaaaa")
    other = Runs(db, "near:8:bbbbbbbb")
    beating = keeper(paused, clock)
    await beating.once()
    await paused.claim(clock.now(), 10, lambda: clock.now() + LEASE, decider.at(clock.now()))
    clock.advance(seconds=30)  # paused, or cut off from the database
    await keeper(other, clock).once()
    assert await node_ids(db) == ["near:8:bbbbbbbb"]
    with caplog.at_level(logging.WARNING, logger="horarium.engine.nodes"):
        await beating.once()
    assert await node_ids(db) == ["far:7:aaaaaaaa", "near:8:bbbbbbbb"]
    assert any("took its executions over" in r.getMessage() for r in caplog.records)
    await paused.close()
    await other.close()


async def test_a_stopped_scheduler_removes_its_node_row(
    db: AsyncEngine, clock: FakeClock, actions: Actions
) -> None:
    scheduler = Scheduler(db, engine_settings(), actions, clock=clock, owner="here:3:cccccccc")
    await scheduler.node.once()
    assert await node_ids(db) == ["here:3:cccccccc"]
    scheduler.start()
    await scheduler.stop()
    assert await node_ids(db) == []


async def test_a_node_back_from_an_outage_beats_before_it_claims_so_its_claims_stand(
    db: AsyncEngine, store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    """After a cut longer than the node timeout, whichever node reaches the database first takes
    the other for gone; a claim made before beating again would be taken over a moment later and
    run twice. `ensure_fresh` (awaited before every claim) beats first."""
    job = await store.add("due", {"action": http(sink.to("/due"))})
    decider = make_scheduler().decider
    back = Runs(db, "back:5:dddddddd")
    other = Runs(db, "other:6:eeeeeeee")
    returning = keeper(back, clock)
    await returning.once()
    await keeper(other, clock).once()
    before = await beats(db)

    clock.advance(seconds=5)  # a beat this young is fresh enough: no extra beat
    await returning.ensure_fresh()
    assert await beats(db) == before

    clock.advance(seconds=25)  # the database was away: 30 s without a beat
    await returning.ensure_fresh()
    assert (await beats(db))["back:5:dddddddd"] == clock.now()
    claimed = await back.claim(
        clock.now(), 10, lambda: clock.now() + LEASE, decider.at(clock.now())
    )
    assert [c.job.id for c in claimed] == [job]
    await keeper(other, clock).once()  # the other node comes back a moment later
    assert (await store.job(job)).lease_owner == "back:5:dddddddd"  # not taken over
    assert await node_ids(db) == ["back:5:dddddddd", "other:6:eeeeeeee"]
    await back.close()
    await other.close()


async def test_a_started_scheduler_beats_before_its_first_claim(
    db: AsyncEngine, clock: FakeClock, actions: Actions
) -> None:
    scheduler = Scheduler(db, engine_settings(), actions, clock=clock, owner="here:4:ffffffff")
    scheduler.start()
    try:
        assert scheduler.dispatcher.before_claim == scheduler.node.ensure_fresh
    finally:
        await scheduler.stop()
