"""The node's heartbeat, and taking over the executions of nodes that stopped beating.

Every engine process is a node with a row in `nodes` (`store.runs.nodes`), written every third
of `node_timeout`. At each beat it also looks for nodes whose last beat is older than
`node_timeout` — killed, their host down, cut off from the database — and ends their leases now,
so that the cluster runs their executions again within seconds instead of when the leases run
out (on any host; the pid rule of `owners.is_gone` covers only this one). The leases remain the
backstop: a node cut off from the database and unable to beat still holds its leases until they
expire, and anything it records after being taken over is refused (its leases moved on).

A node claims only while its last beat is younger than half the node timeout (`ensure_fresh`,
which the dispatcher awaits before each claim, beats first when it is older): so a node coming
back from a database outage longer than the timeout does not claim executions that another node,
taking it for gone a moment later, would run again.

Each beat also reads the database's schema revision and, on PostgreSQL, its clock:
- the offset of the database's clock from the host's corrects the engine's `DatabaseClock`, so
  what is due and whose beat is too old are decided by one clock on every node; a node whose
  offset exceeds `max_offset` claims nothing until it is back within it (its host's time is
  evidently not kept: NTP);
- a schema at a revision the node's code does not know (a newer version migrated it while this
  one ran) stops the node for good: it claims nothing more and `on_outdated` is told once; one
  at an older revision (a restored backup) holds its claims back until it is migrated.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from datetime import datetime, timedelta

from horarium import __version__
from horarium.engine.clock import Clock, DatabaseClock
from horarium.engine.tasks import cancel_and_wait
from horarium.store.core.outages import is_outage
from horarium.store.core.revisions import head_revision, known_revisions
from horarium.store.runs.nodes import Look, Node, Nodes

log = logging.getLogger(__name__)


def this_node(owner: str, clock: Clock) -> Node:
    """The node of this process, known by its lease owner id."""
    return Node(
        owner,
        socket.gethostname()[:255],
        os.getpid(),
        clock.now(),
        __version__[:40],
        head_revision(),
    )


# A reading of the database's clock errs by at most half its round trip: one slower than this
# is read again (at most READINGS times), and the quickest corrects the offset only as far as it
# proves it wrong (`corrected`).
MAX_ROUND_TRIP = timedelta(milliseconds=100)
READINGS = 3


class NodeKeeper:
    def __init__(
        self,
        nodes: Nodes,
        clock: Clock,
        timeout: float,
        on_takeover: Callable[[], None],
        *,
        max_offset: float = 10.0,
        on_outdated: Callable[[str], None] | None = None,
    ) -> None:
        """`clock`: a `DatabaseClock` is corrected at each beat (PostgreSQL); `max_offset`:
        seconds of offset past which the node claims nothing."""
        self._nodes = nodes
        self._clock = clock
        self._timeout = timedelta(seconds=max(timeout, 0.1))
        self._interval = self._timeout.total_seconds() / 3
        self._on_takeover = on_takeover
        self._max_offset = max_offset
        self._on_outdated = on_outdated
        self._task: asyncio.Task[None] | None = None
        self._beaten = False
        self._last_beat: datetime | None = None  # this clock's time of the last beat written
        self._beating = asyncio.Lock()  # the heartbeat task and `ensure_fresh` beat in turn
        self.offset: float | None = None  # seconds the database's clock is ahead of the host's
        self.outdated: str | None = None  # why the node stopped for good (its schema moved on)
        self.clock_off: str | None = None  # why the node claims nothing for now: its clock
        self.behind: str | None = None  # … or the schema's older migration

    @property
    def holding_off(self) -> str | None:
        """Why this node claims no work now; None: it claims."""
        return self.outdated or self.behind or self.clock_off

    def start(self) -> None:
        self._task = asyncio.create_task(self._beat_forever(), name="horarium-heartbeat")

    async def stop(self) -> None:
        """Stop beating and remove the node's row (call once its executions are handed back)."""
        await cancel_and_wait(self._task)
        try:
            await self._nodes.forget()
        except Exception:
            log.exception("could not remove this node's row; the others will once it is stale")

    async def ensure_fresh(self) -> bool:
        """Beat now unless the last beat is younger than half the node timeout (see above);
        returns whether the node may claim (`holding_off`)."""
        last = self._last_beat
        if last is None or self._clock.now() - last >= self._timeout / 2:
            await self.once()
        return self.holding_off is None

    async def once(self) -> None:
        """One beat, and one look for nodes that are gone."""
        async with self._beating:
            await self._beat_and_take_over()

    async def _beat_and_take_over(self) -> None:
        self._check_schema(await self._look())
        now = self._clock.now()
        found = await self._nodes.beat(now, self.offset)
        self._last_beat = now
        if not found and self._beaten:
            log.warning(
                "this node's heartbeat had stopped for more than %g s: the other nodes took its"
                " executions over",
                self._timeout.total_seconds(),
            )
        self._beaten = True
        taken = await self._nodes.take_over(now, now - self._timeout)
        if taken.nodes:
            log.info(
                "taking over %d executions of %s (no heartbeat for more than %g s)",
                taken.executions,
                ", ".join(taken.nodes),
                self._timeout.total_seconds(),
            )
            if taken.executions:
                self._on_takeover()

    async def _look(self) -> Look:
        """Read the database's schema revision and clock, correcting a `DatabaseClock`."""
        clock = self._clock
        if not isinstance(clock, DatabaseClock):
            return await self._nodes.look()
        best: tuple[timedelta, timedelta] | None = None  # (round trip, offset)
        for _ in range(READINGS):
            before = clock.base.now()
            look = await self._nodes.look()
            after = clock.base.now()
            if look.database_time is None:
                return look
            reading = (after - before, look.database_time - (before + (after - before) / 2))
            best = min(best or reading, reading)
            if best[0] <= MAX_ROUND_TRIP:
                break
        if best is not None:
            clock.offset = corrected(clock.offset, *best)
            self.offset = clock.offset.total_seconds()
            self._check_offset(self.offset)
        return look

    def _check_offset(self, offset: float) -> None:
        if abs(offset) <= self._max_offset:
            if self.clock_off is not None:
                log.warning(
                    "this node's clock is within %g s of the database's again: claiming resumes",
                    self._max_offset,
                )
            self.clock_off = None
            return
        if self.clock_off is None:
            side = "behind" if offset > 0 else "ahead of"
            self.clock_off = (
                f"This node's clock is {abs(offset):.1f} s {side} the database's, more than"
                f" --max-clock-offset ({self._max_offset:g} s): it claims no work until they"
                " agree (is NTP running?)."
            )
            log.error("%s", self.clock_off)

    def _check_schema(self, look: Look) -> None:
        """A schema a newer version migrated: stop claiming, for good. One this code knows
        but older (the database restored from a backup): claim nothing until it is back."""
        mine, theirs = self._nodes.node.schema_revision, look.schema_revision
        if self.outdated is not None or theirs is None:
            return
        if theirs == mine:
            self.behind = None
        elif theirs in known_revisions():
            if self.behind is None:
                self.behind = (
                    f"The database's schema is at migration {theirs}, older than this"
                    f" version's {mine}: no work is claimed until it is migrated (restart this"
                    " process)."
                )
                log.error("%s", self.behind)
        else:
            self.outdated = (
                f"the database's schema is now at migration {theirs}, newer than this"
                f" Horarium's ({self._nodes.node.version}, migration {mine}): it stops claiming"
                " and exits; start the new version in its place (docs/operations.md,"
                " Upgrading)."
            )
            log.error("%s", self.outdated)
            if self._on_outdated is not None:
                self._on_outdated(self.outdated)

    async def _beat_forever(self) -> None:
        while True:
            try:
                await self.once()
            except Exception as exc:
                if not is_outage(exc):
                    log.exception("heartbeat failed")
                # else: the engine's other transactions report the outage, once
            await asyncio.sleep(self._interval)


def corrected(offset: timedelta, round_trip: timedelta, reading: timedelta) -> timedelta:
    """The clock's offset after a reading (`reading`, taken in `round_trip`), from `offset`. The
    true offset lies within half the round trip of the reading: a quick reading is taken as it
    is, a slower one moves `offset` only into that range. Nodes whose readings are slow (a busy
    host starting them together) so keep one clock instead of each taking its reading's error:
    to a node ahead, another's lease would look that much shorter."""
    if round_trip <= MAX_ROUND_TRIP:
        return reading
    error = round_trip / 2
    return min(max(offset, reading - error), reading + error)
