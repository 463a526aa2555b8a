"""Group commit of finished attempts: an attempt is handed over when its action ends, and the
attempts that end while a write is under way are written together in the next transaction, so
the store's cost per attempt falls as load rises. Each batch is reported (metrics and log
events, `telemetry`) once, as the recorder takes it up, whether or not its write succeeds.

The attempt's task ends at the hand-over (its slot is free for the next execution at once); the
execution stays held, its lease renewed (`held`), until the write has committed. What follows a
write is reported through `on_written`: whether one of the executions written starts an error
action, which is due at once.

While the database cannot be reached, a batch is kept and written again after a back-off
(`Reachability`), its executions still held: they are not run a second time unless the outage
outlasts their leases. Stopping writes what it can once and leaves the rest to the leases."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from horarium.engine import telemetry
from horarium.engine.clock import Clock
from horarium.engine.reachability import Reachability
from horarium.observe import metrics
from horarium.store.runs.store import RunStore
from horarium.store.runs.transact import transient
from horarium.store.runs.vocabulary import Attempt, Claimed, StartErrorAction

log = logging.getLogger(__name__)

MAX_BATCH = 1000
RETRY_PAUSE = 1.0  # seconds before writing again a batch that failed for a transient reason


class Recorder:
    def __init__(
        self, runs: RunStore, clock: Clock, reachability: Reachability | None = None
    ) -> None:
        self._runs = runs
        self._clock = clock
        self._reachability = reachability or Reachability()
        self._pending: list[Attempt] = []
        self._writing: list[Attempt] = []
        self._unreported: list[Attempt] = []  # handed over, not yet in the metrics and log
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        # Called after each write: whether an error action is due now.
        self.on_written: Callable[[bool], None] = lambda error_due: None

    def submit(self, attempt: Attempt) -> None:
        """Hand over a finished attempt; it is reported (`telemetry`) and written with the next
        batch."""
        self._pending.append(attempt)
        self._unreported.append(attempt)
        self._idle.clear()
        self._ready.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._flush_forever(), name="horarium-recorder")

    @property
    def backlog(self) -> int:
        """Attempts handed over and not yet written."""
        return len(self._pending) + len(self._writing)

    def held(self) -> list[Claimed]:
        """The executions of those attempts: still this process's, until written."""
        return [a.execution for a in self._writing] + [a.execution for a in self._pending]

    async def idle(self) -> None:
        """Until every attempt handed over so far is written."""
        await self._idle.wait()

    async def _flush_forever(self) -> None:
        while True:
            await self._ready.wait()
            self._ready.clear()
            await self._write_pending()
            if self._closing:
                return

    async def _write_pending(self) -> None:
        while self._pending:
            self._report()
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            wait = await self._write(batch)
            if wait is not None:
                self._pending[:0] = batch  # the database is unreachable: kept for later
                if self._closing:
                    break
                await asyncio.sleep(wait)
        self._idle.set()

    def _report(self) -> None:
        """The attempts handed over since the last report, into the metrics and the log (a
        failure to report does not keep them from being written)."""
        if self._unreported:
            reported, self._unreported = self._unreported, []
            try:
                telemetry.attempts_ended(reported)
            except Exception:
                log.exception("reporting %d attempts failed", len(reported))

    async def _write(self, batch: list[Attempt]) -> float | None:
        """Write `batch`; while the database is unreachable, the seconds to wait before trying
        again (the batch was not written), else None."""
        self._writing = batch
        began = metrics.clock()
        try:
            accepted = await self._runs.record(batch, self._clock.now())
            metrics.record_took(began)
            self._reachability.succeeded()
            _report_refused(batch, accepted)
        except Exception as exc:
            metrics.RECORD_FAILURES.inc()
            wait = self._reachability.failed(exc)
            if wait is not None:
                return wait  # the database is unreachable: kept for later
            reason = transient(exc)
            if reason is not None and not self._closing:
                # Kept, their leases renewed, until a write succeeds (the store has run it again
                # already).
                log.warning(
                    "recording %d attempts failed (%s); writing them again in %g s",
                    len(batch),
                    reason,
                    RETRY_PAUSE,
                )
                return RETRY_PAUSE
            # The executions stay leased; once the lease runs out they are run again.
            log.exception("recording %d attempts failed", len(batch))
            accepted = set()
        finally:
            self._writing = []
        error_due = any(
            isinstance(a.step, StartErrorAction) and a.execution.key in accepted for a in batch
        )
        self.on_written(error_due)
        return None

    async def close(self) -> None:
        """Write what is pending, then stop."""
        self._closing = True
        self._ready.set()
        if self._task is not None:
            await self._task
            self._task = None
        await self._write_pending()


def _report_refused(batch: list[Attempt], accepted: set[str]) -> None:
    """Count, and say in one warning, the attempts of `batch` the store did not write because
    this process no longer held their executions: another node took them once their leases ran
    out (and may run them again), or their jobs were deleted meanwhile. Nothing else says so."""
    refused = [a.execution.job for a in batch if a.execution.key not in accepted]
    if refused:
        metrics.ATTEMPTS_NOT_WRITTEN.inc(len(refused))
        named = ", ".join(f"{job.collection}/{job.name}" for job in refused[:5])
        log.warning(
            "%d finished attempts were not written: this node no longer held their executions"
            " (their leases ran out and another node took them, and may run them again; or"
            " their jobs were deleted meanwhile): %s%s",
            len(refused),
            named,
            ", …" if len(refused) > 5 else "",
        )
