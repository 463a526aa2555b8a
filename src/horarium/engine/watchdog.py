"""One backstop timer for every attempt of a process.

An `asyncio.timeout` per attempt costs a timer handle each, and the cancelled handles pile up in
the event loop's heap until it is rebuilt. The watchdog keeps a deadline per running attempt and
looks once per tick (at most a second), cancelling any attempt past its limit; `run_attempt`
turns that cancellation into a failed result, as the per-attempt timeout did. The limit is a
backstop of tens of seconds (actions enforce their own timeouts), so a tick of lateness is fine.
"""

from __future__ import annotations

import asyncio
from typing import Any

Task = asyncio.Task[Any]


class Watchdog:
    def __init__(self, limit: float, tick: float | None = None) -> None:
        self.limit = limit
        self._tick = tick if tick is not None else min(1.0, limit / 10)
        self._deadlines: dict[Task, tuple[float, int]] = {}
        self._expired: set[Task] = set()
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> Task:
        """Watch the current task from now on; pair with `stop`."""
        task = asyncio.current_task()
        assert task is not None, "Watchdog.start runs inside a task"
        loop = task.get_loop()
        self._deadlines[task] = (loop.time() + self.limit, task.cancelling())
        if self._timer is None:
            self._timer = loop.call_later(self._tick, self._check, loop)
        return task

    def stop(self, task: Task) -> bool:
        """Stop watching; True when the watchdog cancelled the task and nothing else did (the
        caller then treats its CancelledError as the time limit, like `asyncio.timeout`)."""
        _, cancelling = self._deadlines.pop(task)
        if self._expired and task in self._expired:
            self._expired.discard(task)
            return task.uncancel() <= cancelling
        return False

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        if not self._deadlines:
            return  # started again by the next attempt
        now = loop.time()
        for task, (deadline, _) in self._deadlines.items():
            if deadline <= now and task not in self._expired:
                self._expired.add(task)
                task.cancel()
        self._timer = loop.call_later(self._tick, self._check, loop)
