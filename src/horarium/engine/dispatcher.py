"""The dispatcher: claim due executions in batches under a lease and run them concurrently.

One loop per process. Each round it claims pending executions (retries, error actions, run-now
requests, executions whose holder died), then turns due jobs into executions, up to the free
slots (`max_in_flight`) plus one batch held ready, and starts one asyncio task per execution.
It sleeps until the earliest thing that can become due (at most `poll_interval`), or until
woken: by the API after a write, by a finished execution that starts an error action, or by the
ready batch running low after a full round.

The ready batch is what keeps a busy process busy: an execution that ends hands its slot to a
ready one at once, while the next claim (a transaction that waits its turn behind the recorder's)
is under way. Without it every slot freed waited for a claim, and in a burst the number running
fell to a handful between claims. Leases of running and ready executions are renewed every
third of the lease.

Which collections may take the slots is `Slots`' to say (`engine/slots.py`): claims pass over
the collections that may be given nothing more, and a ready execution whose collection may not
start another attempt now waits aside (parked), so that it does not take a slot from the
executions behind it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from horarium.actions.base import ActionRunner
from horarium.config import Settings
from horarium.engine.attempt import hard_time_limit, run_attempt
from horarium.engine.clock import Clock
from horarium.engine.deciding import Decider
from horarium.engine.lease_watch import RenewalWatch
from horarium.engine.owners import is_gone
from horarium.engine.reachability import Reachability
from horarium.engine.recorder import Recorder
from horarium.engine.slots import Run, Slots, reserve_for
from horarium.engine.tasks import cancel_and_wait
from horarium.engine.watchdog import Watchdog
from horarium.observe import metrics
from horarium.store.core.outages import is_outage
from horarium.store.runs.store import RunStore
from horarium.store.runs.vocabulary import Claimed, Source

log = logging.getLogger(__name__)

SHUTDOWN_WAIT = 5.0  # seconds a round under way gets to end when the engine stops
WAKE_RECHECK = 0.05  # after a wake-up, look again this soon (the writer may not have committed)
# Jobs due this soon are claimed with the current round and started at their time: claims are
# batched when executions fall due one by one, and start on time.
LOOKAHEAD = timedelta(milliseconds=20)


class Dispatcher:
    def __init__(
        self,
        runs: RunStore,
        actions: ActionRunner,
        settings: Settings,
        clock: Clock,
        recorder: Recorder,
        decider: Decider,
        reachability: Reachability | None = None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        """`timer`: the seconds `Slots` measures attempts in (tests move it)."""
        self._runs = runs
        self._reachability = reachability or Reachability()
        self._actions = actions
        self._settings = settings
        self._watchdog = Watchdog(hard_time_limit(settings.http_timeout))
        self._clock = clock
        self._recorder = recorder
        recorder.on_written = self._written
        self._decider = decider
        self._lease = timedelta(seconds=settings.lease_seconds)
        self._capacity = max(settings.max_in_flight, 1)
        self._batch = max(min(settings.batch_size, self._capacity), 1)
        self._slots = Slots(
            self._capacity,
            reserve_for(self._capacity),
            settings.slow_attempt_seconds,
            timer,
        )
        self._running: dict[str, tuple[Claimed, asyncio.Task[None]]] = {}
        self._ready: deque[Claimed] = deque()  # claimed, waiting for a slot
        # Claimed, waiting until their collection may start another attempt, by collection id.
        self._parked: dict[int, deque[Claimed]] = {}
        self._parked_count = 0
        self._passed: set[int] = set()  # the collections the last claim passed over
        self._starts = 0  # attempts started so far
        self._marks: set[asyncio.Task[None]] = set()  # deadline starts being written
        self._wake = asyncio.Event()
        self._woken = False
        self._full = False  # the last round stopped for lack of slots: more work may be due
        self._horizon = datetime.min.replace(tzinfo=UTC)  # what the last claim looked up to
        self._stopping = False
        self._loop_task: asyncio.Task[None] | None = None
        self._renew_task: asyncio.Task[None] | None = None
        # Awaited before each claim (the node's heartbeat: `NodeKeeper.ensure_fresh`), saying
        # whether the node may claim; None: no condition, as when `drain` runs what is due
        # without a heartbeat.
        self.before_claim: Callable[[], Awaitable[bool]] | None = None
        self._held_off = False  # the last round was refused by `before_claim`
        metrics.count_in_flight(self)

    @property
    def running(self) -> bool:
        """Whether the claiming loop is alive (started, not stopped, not crashed)."""
        return self._loop_task is not None and not self._loop_task.done()

    @property
    def stopping(self) -> bool:
        """Whether `stop` has begun: no attempt starts any more."""
        return self._stopping

    @property
    def in_flight(self) -> int:
        """Executions started and not yet ended."""
        return len(self._running)

    @property
    def attempts_started(self) -> int:
        """Attempts this dispatcher has started."""
        return self._starts

    def wake(self) -> None:
        """Look for due work now (something was written that may be due sooner)."""
        self._woken = True
        self._wake.set()

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._loop(), name="horarium-dispatcher")
        self._renew_task = asyncio.create_task(self._renew_leases(), name="horarium-leases")

    async def stop(self) -> None:
        """Stop claiming; hand back what never started; give running attempts `drain_seconds`
        to finish, cancel the rest and hand their executions back so that the next process
        runs them at once."""
        self._stopping = True
        self._wake.set()
        if self._loop_task is not None:
            # The loop ends after its current round: a claim under way commits on the store's
            # thread even if cancelled, so it is let finish and what it claimed handed back.
            done, _ = await asyncio.wait([self._loop_task], timeout=SHUTDOWN_WAIT)
            if not done:
                self._loop_task.cancel()
        await cancel_and_wait(self._loop_task)
        await self._release_ready()
        if self._running:
            await asyncio.wait(self._tasks(), timeout=self._settings.drain_seconds)
        unfinished = [claimed for claimed, _ in self._running.values()]
        for task in self._tasks():
            task.cancel()
        if self._running:
            await asyncio.wait(self._tasks())
        if self._marks:
            await asyncio.wait(list(self._marks))
        await self._recorder.close()
        await cancel_and_wait(self._renew_task)  # the leases were renewed while draining
        if unfinished:
            await self._release(unfinished)

    async def _release(self, unfinished: list[Claimed]) -> None:
        try:
            await self._runs.release(unfinished, self._clock.now())
        except Exception as exc:
            reason = "the database cannot be reached" if is_outage(exc) else "an error"
            log.warning(
                "could not release %d executions (%s); their leases will expire",
                len(unfinished),
                reason,
                exc_info=None if is_outage(exc) else exc,
            )

    async def _release_ready(self) -> None:
        """Stopping: hand back at once the executions claimed and never started, so that the
        other nodes run them while this one lets its running attempts finish."""
        ready = [*self._ready, *self._parked_executions()]
        self._ready.clear()
        self._parked.clear()
        self._parked_count = 0
        if not ready:
            return
        try:
            await self._runs.release(ready, self._clock.now())
        except Exception:
            log.exception("could not release %d executions; their leases will expire", len(ready))

    async def drain(self) -> int:
        """Run everything due now to the end (tests and tools); returns the attempts made."""
        await self._recover()
        first = self._starts
        while True:
            before = self._starts
            await self._fill()
            while self._running:  # ending executions start the ready ones
                await asyncio.wait(self._tasks())
            await self._recorder.idle()
            if self._starts == before and not self._ready and not self._parked:
                return self._starts - first

    # -- the loop ---------------------------------------------------------------------------

    async def _recover(self) -> None:
        """At start: executions held by a process of this host that is gone (killed, then
        restarted) are taken over now rather than when their leases run out."""
        owner = self._runs.owner
        try:
            taken = await self._runs.expire_gone_leases(
                self._clock.now(), lambda other: is_gone(other, owner)
            )
        except Exception:
            log.exception("could not look for executions of processes that are gone")
            return
        if taken:
            log.info("taking over %d executions of a process that is gone", taken)

    async def _loop(self) -> None:
        await self._recover()
        while not self._stopping:
            try:
                started = await self._fill()
                delay = await self._delay(started)
                self._reachability.succeeded()
            except Exception as exc:
                delay = self._round_failed(exc)
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=delay)
            except TimeoutError:
                pass
            self._wake.clear()

    def _round_failed(self, exc: Exception) -> float:
        """Seconds until the next round after a failed one: a back-off while the database
        cannot be reached (claims resume by themselves when it answers), else a poll
        interval."""
        wait = self._reachability.failed(exc)
        if wait is not None:
            return wait
        log.error("dispatcher round failed; retrying", exc_info=exc)
        return self._settings.poll_interval

    async def _delay(self, started: int) -> float:
        poll = max(self._settings.poll_interval, 0.01)
        if self._woken:
            self._woken = False
            return min(WAKE_RECHECK, poll)
        if self._full or self._held_off:
            return poll  # woken as slots free up; or asked again at the next poll
        next_due = await self._runs.next_due(self._slots.full())
        if next_due is None:
            return poll
        now = self._clock.now()
        seconds = (next_due - LOOKAHEAD - now).total_seconds()
        if seconds > 0:
            return min(seconds, poll)
        ahead = (next_due - now).total_seconds()
        if ahead > 0:
            # Within the look-ahead, but the round's claim (its horizon read a moment ago)
            # missed it: the timer woke a little early, as event-loop timers may. Look again
            # by its due time rather than a poll interval later.
            return min(ahead, poll)
        # Due now. Go again when this round started work, or when the work fell due after the
        # last claim's horizon (the claim never looked at it: it ran a little early, or this
        # look came late). Work the claim saw and left (not claimable): do not spin.
        return 0.0 if started or next_due > self._horizon else poll

    def _wanted(self) -> int:
        """How many more executions to claim: the free slots and one batch held ready, less
        what the recorder has waiting beyond one slot's worth each (the store is behind)."""
        behind = max(0, self._recorder.backlog - self._capacity)
        waiting = len(self._ready) + self._parked_count
        return self._capacity + self._batch - len(self._running) - waiting - behind

    def _written(self, error_due: bool) -> None:
        """After each recorder write: an error action is due now; the backlog has shrunk."""
        if error_due:
            self.wake()
        else:
            self._claim_again_if_short()

    def _claim_again_if_short(self) -> None:
        """After a round that stopped for lack of slots: wake the loop once half a batch is
        wanted again (slots freed, the ready batch drawn down, the recorder caught up), or
        nothing runs any more."""
        if self._full and not self._stopping:
            if self._wanted() >= max(self._batch // 2, 1) or not self._running:
                self._wake.set()

    async def _fill(self) -> int:
        """Claim work while slots are free or the ready batch is short, and start what fits;
        returns how many attempts started."""
        started = self._start_all_parked()
        started += self._start_ready()
        self._full = self._held_off = False
        while not self._stopping:
            want = min(self._wanted(), self._batch)
            if want <= 0:
                self._full = True
                break
            if self.before_claim is not None and not await self.before_claim():
                self._held_off = True
                break
            now = self._clock.now()
            began = metrics.clock()
            self._horizon = now + LOOKAHEAD
            claimed = await self._runs.claim(
                now,
                want,
                self._lease_end,
                self._decider.at(now),
                self._horizon,
                self._slots.budget(),
            )
            metrics.claim_took(began)
            self._hold(claimed)
            self._passed = set(self._slots.full())
            self._ready.extend(claimed)
            started += self._start_ready()
            if len(claimed) < want:
                break
        return started

    def _hold(self, claimed: list[Claimed]) -> None:
        for execution in claimed:
            self._slots.hold(execution.job.collection_id)

    def _let_go(self, execution: Claimed, run: Run) -> None:
        """An execution's attempt ended: parked executions may start, and its collection may
        be given more. When the last claim passed the collection over (its due work left unclaimed),
        claim again once it may be given half a batch (or half its share, when smaller), rather
        than at the next poll."""
        self._slots.end(run)
        collection = execution.job.collection_id
        if self._parked:
            self._start_all_parked()
        if collection in self._passed:
            enough = max(min(self._batch, self._slots.share(collection)) // 2, 1)
            if self._slots.room(collection) >= enough:
                self._passed.discard(collection)
                self._wake.set()

    def _start_ready(self) -> int:
        """Start ready executions in their order while slots are free (none once stopping); an
        execution whose collection may not start another attempt now is parked."""
        started = 0
        while self._ready and len(self._running) < self._capacity and not self._stopping:
            execution = self._ready.popleft()
            collection = execution.job.collection_id
            run = self._slots.try_start(collection)
            if run is not None:
                self._start(execution, run)
                started += 1
            else:
                self._parked.setdefault(collection, deque()).append(execution)
                self._parked_count += 1
        return started

    def _start_parked(self, collection: int) -> int:
        """Start the collection's parked executions, oldest first, while it may and slots are
        free."""
        parked = self._parked.get(collection)
        if parked is None:
            return 0
        started = 0
        while parked and len(self._running) < self._capacity and not self._stopping:
            run = self._slots.try_start(collection)
            if run is None:
                break
            self._start(parked.popleft(), run)
            self._parked_count -= 1
            started += 1
        if not parked:
            del self._parked[collection]
        return started

    def _start_all_parked(self) -> int:
        return sum(self._start_parked(collection) for collection in list(self._parked))

    def _parked_executions(self) -> list[Claimed]:
        return [execution for parked in self._parked.values() for execution in parked]

    def _start(self, execution: Claimed, run: Run) -> None:
        task = asyncio.create_task(self._execute(execution, run), name=f"horarium-{execution.key}")
        self._running[execution.key] = (execution, task)
        self._starts += 1

    async def _execute(self, execution: Claimed, run: Run) -> None:
        try:
            now = self._clock.now()
            if execution.source == Source.JOB_ROW:
                early = (execution.expected - now).total_seconds()
                if 0 < early <= 2 * LOOKAHEAD.total_seconds():
                    await asyncio.sleep(early)  # claimed a little ahead: start on time
                    now = self._clock.now()
                if execution.job.policy.deadlines:
                    self._mark_started(execution, now)
            attempt = await run_attempt(
                self._actions,
                execution,
                self._clock,
                self._settings.region,
                self._watchdog,
                now,
            )
            self._recorder.submit(attempt)  # written with the next batch; the slot is free now
        except Exception:
            log.exception("execution %s failed in the engine; it will be retried", execution.key)
        finally:
            self._running.pop(execution.key, None)
            self._let_go(execution, run)
            self._start_ready()
            self._claim_again_if_short()

    def _mark_started(self, execution: Claimed, now: datetime) -> None:
        """Write the start (`now`) of a first attempt whose job has deadlines, beside the
        attempt (the action does not wait for it)."""
        task = asyncio.create_task(self._write_start(execution, now))
        self._marks.add(task)
        task.add_done_callback(self._marks.discard)

    async def _write_start(self, execution: Claimed, now: datetime) -> None:
        try:
            await self._runs.mark_started([execution], now)
        except Exception as exc:
            if not is_outage(exc):
                log.exception("marking the start of %s failed", execution.key)

    def _tasks(self) -> list[asyncio.Task[None]]:
        return [task for _, task in self._running.values()]

    def _lease_end(self) -> datetime:
        """The end of a lease written now (the store reads it as it writes the lease)."""
        return self._clock.now() + self._lease

    async def _renew_leases(self) -> None:
        """Renew every third of the lease, counted from the start of the previous renewal: a
        slow renewal does not put the next one off by its own length."""
        interval = max(self._settings.lease_seconds / 3, 0.05)
        loop = asyncio.get_running_loop()
        watch = RenewalWatch(self._settings.lease_seconds, loop.time())
        wait = interval
        while True:
            await asyncio.sleep(wait)
            began = loop.time()
            wait = await self._renew_held(interval, watch)
            wait = max(wait - (loop.time() - began), 0.0)

    async def _renew_held(self, interval: float, watch: RenewalWatch) -> float:
        """Renew the leases of what this process holds; returns when to renew next: sooner
        while the database cannot be reached, so that the leases are renewed once it answers."""
        held = [claimed for claimed, _ in self._running.values()]
        held.extend(self._ready)
        held.extend(self._parked_executions())
        held.extend(self._recorder.held())
        loop = asyncio.get_running_loop()
        if not held:
            watch.renewed(loop.time(), held=False)
            return interval
        try:
            await self._runs.renew(held, self._lease_end)
        except Exception as exc:
            wait = self._reachability.failed(exc)
            if wait is not None:
                return min(wait, interval)
            log.exception("lease renewal failed")
            return interval
        watch.renewed(loop.time(), held=True)
        return interval
