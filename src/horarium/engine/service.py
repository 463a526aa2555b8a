"""Hooks the service uses to run the scheduler: inside `horarium serve`, or alone as
`horarium worker` against the same database."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import weakref
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.config import Settings
from horarium.engine.gc_tuning import tune_gc
from horarium.engine.scheduler import Scheduler
from horarium.loops import loop_factory, running_loop_name
from horarium.store.sealing import Keyring

log = logging.getLogger(__name__)

_running: weakref.WeakSet[Scheduler] = weakref.WeakSet()


def wake() -> None:
    """Tell the schedulers of this process to look for due work now. The API calls it after
    committing a write that may be due soon (a job PUT, enable, run now); without it the
    scheduler notices within `poll_interval`."""
    for scheduler in list(_running):
        scheduler.wake()


async def start_engine(db: AsyncEngine, settings: Settings) -> Callable[[], Awaitable[None]]:
    """Start the scheduler inside the running event loop; returns an async stop function."""
    from horarium.actions.outbound import weakening
    from horarium.actions.runner import Actions

    actions = Actions(settings)
    warning = weakening(settings.outbound_deny, settings.outbound_allow)
    if warning:
        print(f"WARNING: {warning}", file=sys.stderr, flush=True)
    await actions.__aenter__()
    scheduler = Scheduler(db, settings, actions)
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


async def _worker(settings: Settings, keyring: Keyring) -> None:
    from horarium.store.db import create_engine

    db = create_engine(settings.database_url, keyring=keyring)
    try:
        stop = await start_engine(db, settings)
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopped.set)
        await stopped.wait()
        log.info("stopping the scheduler")
        await stop()
    finally:
        await db.dispose()


def run_worker(settings: Settings) -> None:
    """`horarium worker`: the scheduler alone, no API (prepares the database at start:
    `horarium.opening.prepare`)."""
    from horarium.opening import prepare

    keyring = prepare(settings)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    with asyncio.Runner(loop_factory=loop_factory(settings.loop)) as runner:
        runner.run(_worker(settings, keyring))
