"""A request's costly pure steps (validating an iCalendar document, compiling a schedule that
lists exclusion calendars, listing its runs) run in a small pool of worker processes, so that
neither their CPU nor the interpreter lock they would hold delays the event loop: `/healthz` and
every other request keep answering meanwhile. Each step's cost is bounded by the recurrence
package's limits (docs/recurrence.md §8); a cheap step runs inline, where a process round trip
would cost more than the step.

The pool starts on first use (a process that never meets a calendar never starts it) with the
`spawn` method: its workers share nothing with the service's threads."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

WORKERS = 2  # processes in the pool
PARENT_CHECK = 1.0  # seconds between a worker's looks at whether the service still runs

_pool: ProcessPoolExecutor | None = None


async def evaluate(costly: bool, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`work(*args, **kwargs)`: in the pool when `costly`, else here. `work` is a module-level
    function; its arguments, result and exceptions cross a process boundary (pickled)."""
    if not costly:
        return work(*args, **kwargs)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_the_pool(), functools.partial(work, *args, **kwargs))


def _the_pool() -> ProcessPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(
            WORKERS,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_leave_with,
            initargs=(os.getpid(),),
        )
    return _pool


def _leave_with(parent: int) -> None:
    """In a worker: exit once the service process is gone (killed, it could not stop us)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        os._exit(0)

    threading.Thread(target=watch, name="horarium-offload-parent", daemon=True).start()


def shut_down() -> None:
    """Stop the pool's workers, if it started (the service is stopping)."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None
