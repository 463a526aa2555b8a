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
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from datetime import datetime, timedelta
from importlib.metadata import PackageNotFoundError, version

from horarium.engine.clock import Clock
from horarium.engine.tasks import cancel_and_wait
from horarium.store.core.outages import is_outage
from horarium.store.runs.nodes import Node, Nodes

log = logging.getLogger(__name__)


def this_node(owner: str, clock: Clock) -> Node:
    """The node of this process, known by its lease owner id."""
    return Node(owner, socket.gethostname()[:255], os.getpid(), clock.now(), _version())


class NodeKeeper:
    def __init__(
        self, nodes: Nodes, clock: Clock, timeout: float, on_takeover: Callable[[], None]
    ) -> None:
        self._nodes = nodes
        self._clock = clock
        self._timeout = timedelta(seconds=max(timeout, 0.1))
        self._interval = self._timeout.total_seconds() / 3
        self._on_takeover = on_takeover
        self._task: asyncio.Task[None] | None = None
        self._beaten = False
        self._last_beat: datetime | None = None  # this clock's time of the last beat written
        self._beating = asyncio.Lock()  # the heartbeat task and `ensure_fresh` beat in turn

    def start(self) -> None:
        self._task = asyncio.create_task(self._beat_forever(), name="horarium-heartbeat")

    async def stop(self) -> None:
        """Stop beating and remove the node's row (call once its executions are handed back)."""
        await cancel_and_wait(self._task)
        try:
            await self._nodes.forget()
        except Exception:
            log.exception("could not remove this node's row; the others will once it is stale")

    async def ensure_fresh(self) -> None:
        """Beat now unless the last beat is younger than half the node timeout (see above)."""
        last = self._last_beat
        if last is None or self._clock.now() - last >= self._timeout / 2:
            await self.once()

    async def once(self) -> None:
        """One beat, and one look for nodes that are gone."""
        async with self._beating:
            await self._beat_and_take_over()

    async def _beat_and_take_over(self) -> None:
        now = self._clock.now()
        found = await self._nodes.beat(now)
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

    async def _beat_forever(self) -> None:
        while True:
            try:
                await self.once()
            except Exception as exc:
                if not is_outage(exc):
                    log.exception("heartbeat failed")
                # else: the engine's other transactions report the outage, once
            await asyncio.sleep(self._interval)


def _version() -> str:
    try:
        return version("horarium")[:40]
    except PackageNotFoundError:
        return "unknown"
