"""How a node reads the database's clock (`NodeKeeper`, PostgreSQL): a reading errs by up to half
its round trip. Nodes of one host that start together on a busy machine read slowly; taken as
they were, their errors put the nodes' clocks apart by up to a round trip, and to the node ahead
another's fresh lease ran out that much sooner (likely why three workers with 1 s leases once
delivered executions claimed in their first seconds twice). A slow reading now moves the clock
only as far as it proves it wrong; a quick one is taken as it is. Fast: the database is a
stand-in whose reads take the time the test gives them."""

from __future__ import annotations

from datetime import timedelta

from horarium.engine.clock import DatabaseClock
from horarium.engine.nodes import NodeKeeper, this_node
from horarium.store.core.revisions import head_revision
from horarium.store.runs.nodes import Look, Takeover
from tests.engine.engine_support import FakeClock

LEASE = timedelta(seconds=1)


class ReadDatabase:
    """The `Nodes` a keeper talks to: each look takes `round_trip` of the host's clock and reads
    a database whose clock is `ahead` of the host's, off by `error` at the instant read."""

    def __init__(self, host: FakeClock, ahead: float, round_trip: float, error: float) -> None:
        self.host = host
        self.ahead = timedelta(seconds=ahead)
        self.round_trip = timedelta(seconds=round_trip)
        self.error = timedelta(seconds=error)
        self.node = this_node("this-host:1:00000001", host)

    async def look(self) -> Look:
        sent = self.host.now()
        self.host.advance(seconds=self.round_trip.total_seconds())
        read_at = sent + self.error + self.round_trip / 2
        return Look(head_revision(), read_at + self.ahead)

    async def beat(self, now: object, offset: float | None = None) -> bool:
        return True

    async def take_over(self, now: object, cutoff: object) -> Takeover:
        return Takeover([], 0)

    async def forget(self) -> None:
        return None


async def read_once(database: ReadDatabase) -> DatabaseClock:
    """A node's clock after its first beat."""
    clock = DatabaseClock(database.host)
    await NodeKeeper(database, clock, 15.0, lambda: None).once()  # type: ignore[arg-type]
    return clock


async def test_nodes_of_one_host_whose_first_readings_are_slow_keep_one_clock() -> None:
    host = FakeClock()
    # Two nodes of this host, the database's clock the host's; each reading takes a second and
    # errs by most of half of it, one each way.
    first = await read_once(ReadDatabase(host, ahead=0.0, round_trip=1.0, error=0.45))
    second = await read_once(ReadDatabase(host, ahead=0.0, round_trip=1.0, error=-0.45))
    assert first.now() == second.now() == host.now()
    # A lease the first writes is the second's to take only once it has run out.
    until = first.now() + LEASE
    host.advance(seconds=0.9)
    assert second.now() < until


async def test_a_slow_reading_still_corrects_a_host_clock_that_is_off() -> None:
    host = FakeClock()
    database = ReadDatabase(host, ahead=3.0, round_trip=1.0, error=-0.4)
    clock = DatabaseClock(host)
    keeper = NodeKeeper(database, clock, 15.0, lambda: None)  # type: ignore[arg-type]
    await keeper.once()
    # Corrected as far as the reading proves: within its round trip of the database's time.
    assert abs(clock.offset.total_seconds() - 3.0) <= 1.0
    assert keeper.offset == clock.offset.total_seconds()
    # A quick reading is taken as it is.
    database.round_trip, database.error = timedelta(milliseconds=10), timedelta(milliseconds=3)
    await keeper.once()
    assert clock.offset == timedelta(seconds=3.003)


async def test_a_slow_reading_beyond_the_allowed_offset_holds_the_node_off() -> None:
    host = FakeClock()
    database = ReadDatabase(host, ahead=-12.0, round_trip=1.0, error=0.3)
    keeper = NodeKeeper(database, DatabaseClock(host), 15.0, lambda: None)  # type: ignore[arg-type]
    await keeper.once()
    assert keeper.holding_off is not None and "ahead of the database" in keeper.holding_off
