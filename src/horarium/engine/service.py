"""Hooks the service uses to run the scheduler: inside `horarium serve`, or alone as
`horarium worker` (`horarium.process.worker`) against the same database."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium import logs
from horarium.config import Settings
from horarium.engine.gc_tuning import tune_gc
from horarium.engine.scheduler import Scheduler
from horarium.loops import running_loop_name
from horarium.observe.health import EngineState

log = logging.getLogger(__name__)

_running: weakref.WeakSet[Scheduler] = weakref.WeakSet()


def wake() -> None:
    """Tell the schedulers of this process to look for due work now. The API calls it after
    committing a write that may be due soon (a job PUT, enable, run now); without it the
    scheduler notices within `poll_interval`."""
    for scheduler in list(_running):
        scheduler.wake()


def running() -> bool:
    """Whether the schedulers started in this process (`start_engine`) are all running; False
    when none was started."""
    schedulers = list(_running)
    return bool(schedulers) and all(s.dispatcher.running for s in schedulers)


def state() -> EngineState | None:
    """This process's scheduler as `/readyz?verbose` shows it; None when none was started."""
    for scheduler in list(_running):
        node = scheduler.node
        return EngineState(
            scheduler.runs.owner, scheduler.wakeups.listening, node.holding_off, node.offset
        )
    return None


async def start_engine(
    db: AsyncEngine, settings: Settings, on_outdated: Callable[[str], None] | None = None
) -> Callable[[], Awaitable[None]]:
    """Start the scheduler inside the running event loop; returns an async stop function.
    `on_outdated`: told once, with a sentence, when a newer version migrated the database (the
    scheduler has stopped claiming; the process should stop)."""
    from horarium.actions.outbound import weakening
    from horarium.actions.runner import Actions

    actions = Actions(settings)
    warning = weakening(settings.outbound_deny, settings.outbound_allow)
    if warning:
        logs.warn(warning, label="WARNING")
    await actions.__aenter__()
    scheduler = Scheduler(db, settings, actions, on_outdated=on_outdated)
    tune_gc()  # the process is up: what exists now lives as long as it does
    scheduler.start()
    _running.add(scheduler)
    log.info(
        "scheduler started (owner %s, event loop %s)", scheduler.runs.owner, running_loop_name()
    )

    async def stop() -> None:
        _running.discard(scheduler)
        try:
            await scheduler.stop()
        finally:
            await actions.__aexit__(None, None, None)

    return stop
