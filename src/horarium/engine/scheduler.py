"""The engine of one process, assembled: store, plans, decider, dispatcher, recorder, cleanup,
heartbeat, the listener of cross-node wake-ups, pauses, notifications and check-in monitors."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.base import ActionRunner
from horarium.config import Settings
from horarium.engine.cleanup import clean_forever
from horarium.engine.clock import Clock, DatabaseClock
from horarium.engine.deadlines import watch_deadlines_forever
from horarium.engine.deciding import Decider
from horarium.engine.dispatcher import Dispatcher
from horarium.engine.monitoring import watch_monitors_forever
from horarium.engine.nodes import NodeKeeper, this_node
from horarium.engine.notifying import Notifier
from horarium.engine.owners import owner_id
from horarium.engine.pauses import end_pauses_forever
from horarium.engine.plans import Plans
from horarium.engine.reachability import Reachability
from horarium.engine.recorder import Recorder
from horarium.engine.tasks import cancel_and_wait
from horarium.engine.wakeups import WakeListener
from horarium.store.runs.store import Runs


class Scheduler:
    def __init__(
        self,
        db: AsyncEngine,
        settings: Settings,
        actions: ActionRunner,
        clock: Clock | None = None,
        owner: str | None = None,
        on_outdated: Callable[[str], None] | None = None,
    ) -> None:
        """`clock`: the host's clock corrected to the database's unless given (a
        `DatabaseClock` given is corrected too); `on_outdated`: told once, with a sentence,
        when the schema moved past this code's (the process should exit)."""
        self.db = db
        self.clock: Clock = clock or DatabaseClock()
        self.runs = Runs(db, owner or owner_id())
        self.reachability = Reachability()  # shared: one outage is logged once
        self.recorder = Recorder(self.runs, self.clock, self.reachability)
        self.decider = Decider(
            Plans(settings.plan_cache_size), timedelta(seconds=settings.grace_period)
        )
        self.dispatcher = Dispatcher(
            self.runs,
            actions,
            settings,
            self.clock,
            self.recorder,
            self.decider,
            self.reachability,
        )
        self.node = NodeKeeper(
            self.runs.nodes(this_node(self.runs.owner, self.clock)),
            self.clock,
            settings.node_timeout,
            self.dispatcher.wake,
            max_offset=settings.max_clock_offset,
            on_outdated=on_outdated,
        )
        self.wakeups = WakeListener(db, self.dispatcher.wake, self.reachability)
        self._poll_interval = settings.poll_interval
        self.notifier = Notifier(db, self.clock, settings)
        self._cleanup: asyncio.Task[None] | None = None
        self._pauses: asyncio.Task[None] | None = None
        self._notifications: asyncio.Task[None] | None = None
        self._monitors: asyncio.Task[None] | None = None
        self._deadlines: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.dispatcher.before_claim = self.node.ensure_fresh
        self.node.start()
        self.wakeups.start()
        self.dispatcher.start()
        self._cleanup = asyncio.create_task(
            clean_forever(self.db, self.clock), name="horarium-cleanup"
        )
        self._pauses = asyncio.create_task(
            end_pauses_forever(self.db, self.clock, self._poll_interval, self.wake),
            name="horarium-pauses",
        )
        self._notifications = asyncio.create_task(
            self.notifier.run_forever(), name="horarium-notifications"
        )
        self._monitors = asyncio.create_task(
            watch_monitors_forever(self.db, self.runs.transactor, self.clock, self._poll_interval),
            name="horarium-monitors",
        )
        self._deadlines = asyncio.create_task(
            watch_deadlines_forever(self.db, self.clock, self._poll_interval),
            name="horarium-deadlines",
        )

    def wake(self) -> None:
        self.dispatcher.wake()

    async def stop(self) -> None:
        for task in (
            self._cleanup,
            self._pauses,
            self._notifications,
            self._monitors,
            self._deadlines,
        ):
            await cancel_and_wait(task)
        await self.wakeups.stop()
        await self.dispatcher.stop()
        await self.node.stop()
        await self.runs.close()

    async def drain(self) -> int:
        """Run everything due at the clock's current time to the end (tests, tools)."""
        n = await self.dispatcher.drain()
        await self.recorder.close()
        return n
