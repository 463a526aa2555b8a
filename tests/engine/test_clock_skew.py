"""Time from one clock: on PostgreSQL every node measures its clock's offset from the
database's at each heartbeat and decides what is due, and whose heartbeat is too old, by the
database's time. Two nodes on one database, one of them with its clock shifted: no execution
starts early and none runs twice. Within `--max-clock-offset` (10 s) the shifted node claims
as the other does; beyond it, it claims nothing and says why."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.engine.clock import DatabaseClock
from horarium.engine.scheduler import Scheduler
from tests.engine.engine_support import Sink, Store, engine_settings, http

pytestmark = pytest.mark.parametrize("db_url", ["postgres"], indirect=True)

JOBS = 40
SPACING = timedelta(milliseconds=100)
EARLY = timedelta(milliseconds=100)  # the bound
TAG = "x-ms-execution-tag"


class ShiftedClock:
    """The host's clock, off by `seconds` (a node whose NTP is not running)."""

    def __init__(self, seconds: float) -> None:
        self.shift = timedelta(seconds=seconds)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.shift


def node(db: AsyncEngine, actions: Actions, clock: DatabaseClock, name: str) -> Scheduler:
    # A short node timeout: a node taking another for gone (its beats read on a clock that is
    # off) would take its executions over within the test, as it did before one clock.
    settings = engine_settings(node_timeout=3.0, lease_seconds=30.0)
    return Scheduler(db, settings, actions, clock=clock, owner=f"{name}:1:0000000{len(name)}")


async def one_time_jobs(store: Store, sink: Sink, first: datetime) -> dict[str, datetime]:
    """`JOBS` one-time jobs, one every `SPACING` from `first`: their paths and start times."""
    expected = {}
    for i in range(JOBS):
        at = first + i * SPACING
        path = f"/job-{i}"
        start = at.isoformat().replace("+00:00", "Z")
        await store.add(f"j{i}", {"startTime": start, "action": http(sink.to(path))}, at)
        expected[path] = at
    return expected


@pytest.mark.parametrize("shift", [5.0, -5.0, 12.0, -12.0])
async def test_a_node_with_a_shifted_clock_starts_nothing_early_and_nothing_twice(
    db: AsyncEngine, actions: Actions, sink: Sink, shift: float
) -> None:
    sink.delay = 1.0  # executions stay in flight: a wrong takeover would run them again
    store = Store(db)
    steady = node(db, actions, DatabaseClock(), "steady")
    shifted = node(db, actions, DatabaseClock(ShiftedClock(shift)), "shifted")
    steady.start()
    shifted.start()
    try:
        expected = await one_time_jobs(store, sink, datetime.now(UTC) + timedelta(seconds=2))
        await sink.wait_hits(JOBS)  # (bounded: 10 s)
        await asyncio.sleep(4.0)  # past a node timeout: a wrong takeover would show now
    finally:
        await shifted.stop()
        await steady.stop()

    early = [
        (h.path, (expected[h.path] - h.at).total_seconds())
        for h in sink.hits
        if h.at < expected[h.path] - EARLY
    ]
    assert early == []
    twice = [tag for tag, n in Counter(h.headers[TAG] for h in sink.hits).items() if n > 1]
    assert twice == []
    assert sorted({h.path for h in sink.hits}) == sorted(expected)
    # Each node measured its offset from the database (one host here: the shift, reversed).
    assert steady.node.offset is not None and abs(steady.node.offset) < 0.5
    assert shifted.node.offset is not None and abs(shifted.node.offset + shift) < 0.5
    assert steady.node.holding_off is None
    if abs(shift) > engine_settings().max_clock_offset:
        assert shifted.node.holding_off is not None
        assert "--max-clock-offset" in shifted.node.holding_off
        assert shifted.dispatcher.attempts_started == 0
    else:
        assert shifted.node.holding_off is None
