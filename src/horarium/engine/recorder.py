"""Group commit of finished attempts: attempts that end while a write is under way are written
together in the next transaction, so the store's cost per attempt falls as load rises."""

from __future__ import annotations

import asyncio
import logging

from horarium.engine.clock import Clock
from horarium.store.runs import Attempt, Runs

log = logging.getLogger(__name__)

MAX_BATCH = 1000


class Recorder:
    def __init__(self, runs: Runs, clock: Clock, touched_jobs: set[int]) -> None:
        self._runs = runs
        self._clock = clock
        self._pending: list[tuple[Attempt, asyncio.Future[bool]]] = []
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._touched = touched_jobs  # jobs with new history since the last cleanup

    async def record(self, attempt: Attempt) -> bool:
        """Write the attempt; True once committed, False when this process no longer held the
        execution (its lease was taken over, or the job was deleted) or the write failed."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._pending.append((attempt, future))
        self._ready.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._flush_forever(), name="horarium-recorder")
        return await future

    async def _flush_forever(self) -> None:
        while True:
            await self._ready.wait()
            self._ready.clear()
            while self._pending:
                batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
                await self._write(batch)
            if self._closing:
                return

    async def _write(self, batch: list[tuple[Attempt, asyncio.Future[bool]]]) -> None:
        try:
            accepted = await self._runs.record([a for a, _ in batch], self._clock.now())
        except Exception:
            # The executions stay leased; once the lease runs out they are run again.
            log.exception("recording %d attempts failed", len(batch))
            accepted = set()
        for attempt, future in batch:
            if attempt.execution.key in accepted:
                self._touched.add(attempt.execution.job.id)
            if not future.done():
                future.set_result(attempt.execution.key in accepted)

    async def close(self) -> None:
        """Write what is pending, then stop."""
        self._closing = True
        self._ready.set()
        if self._task is not None:
            await self._task
            self._task = None
        while self._pending:
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            await self._write(batch)
