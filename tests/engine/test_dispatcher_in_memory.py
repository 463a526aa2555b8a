"""The dispatcher, recorder and decider against the in-memory store (`memory_store`): the
engine's own rules, without a database, in milliseconds. The same rules on SQLite and
PostgreSQL are in test_dispatching.py, test_executions.py and test_recovery.py."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from horarium.engine import telemetry
from horarium.engine.deciding import Decider
from horarium.engine.dispatcher import Dispatcher
from horarium.engine.plans import Plans
from horarium.engine.recorder import Recorder
from horarium.model.enums import HistoryStatus, JobState
from horarium.observe import metrics
from tests.engine.engine_support import T0, FakeClock, engine_settings
from tests.engine.memory_store import MemoryRunStore
from tests.engine.scripted_actions import ScriptedActions, action


class Timer:
    """The seconds the dispatcher's slots measure attempts in, moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def engine(
    store: MemoryRunStore,
    actions: ScriptedActions,
    clock: FakeClock,
    timer: Timer | None = None,
    **settings: Any,
) -> Dispatcher:
    recorder = Recorder(store, clock)
    decider = Decider(Plans(100), timedelta(seconds=60))
    return Dispatcher(
        store,
        actions,
        engine_settings(**settings),
        clock,
        recorder,
        decider,
        timer=timer or Timer(),
    )


async def until(check: Callable[[], bool]) -> None:
    """Until `check()` holds, looked at every millisecond (at most 5 s)."""
    for _ in range(5000):
        if check():
            return
        await asyncio.sleep(0.001)
    raise TimeoutError("the condition never held")


async def test_every_due_job_runs_once_never_more_than_max_in_flight_at_once() -> None:
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    for i in range(120):
        store.add(f"j{i}", {"action": action(f"/j{i}")}, created=T0)
    dispatcher = engine(store, actions, clock, max_in_flight=10, batch_size=5)

    assert await dispatcher.drain() == 120

    assert sorted(actions.calls) == sorted(f"/j{i}" for i in range(120))
    assert 1 < actions.most_running <= 10
    assert all(job.info.state == JobState.COMPLETED for job in store.jobs.values())
    assert [e.status for e in store.history] == [HistoryStatus.COMPLETED] * 120


async def test_attempts_are_recorded_even_when_reporting_them_fails(monkeypatch: Any) -> None:
    def broken(attempts: Any) -> None:
        raise RuntimeError("a broken metric")

    monkeypatch.setattr(telemetry, "attempts_ended", broken)
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    for i in range(3):
        store.add(f"j{i}", {"action": action(f"/j{i}")}, created=T0)

    # Before the guard, the recorder's task died and drain() waited for it forever.
    assert await asyncio.wait_for(engine(store, actions, clock).drain(), timeout=5) == 3

    assert [e.status for e in store.history] == [HistoryStatus.COMPLETED] * 3
    assert all(job.info.state == JobState.COMPLETED for job in store.jobs.values())


async def test_retries_follow_the_interval_then_the_error_action_and_the_job_faults() -> None:
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    retry = {"retryType": "Fixed", "retryInterval": "00:00:20", "retryCount": 1}
    store.add("j", {"action": action("/main", retryPolicy=retry, errorAction=action("/err"))}, T0)
    actions.planned["/main"] = [False]
    dispatcher = engine(store, actions, clock)

    assert await dispatcher.drain() == 1
    clock.advance(seconds=19)
    assert await dispatcher.drain() == 0  # the retry is not due yet
    clock.advance(seconds=1)
    assert await dispatcher.drain() == 2  # the retry fails; the error action runs at once

    assert actions.calls == ["/main", "/main", "/err"]
    assert [(e.action, e.status, e.retry) for e in store.entries("j")] == [
        ("MainAction", HistoryStatus.FAILED, 0),
        ("MainAction", HistoryStatus.FAILED, 1),
        ("ErrorAction", HistoryStatus.COMPLETED, 0),
    ]
    [job] = store.jobs.values()
    assert (job.info.state, job.executions, job.failures, job.faults) == (
        JobState.FAULTED,
        3,
        2,
        1,
    )


async def test_stopping_hands_back_executions_claimed_but_not_started() -> None:
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    for i in range(4):
        store.add(f"j{i}", {"action": action(f"/j{i}")}, created=T0)
    actions.gate = asyncio.Event()
    # Under 10 slots none is reserved: one collection, new and hung, may fill every one.
    dispatcher = engine(store, actions, clock, max_in_flight=2, batch_size=2)
    dispatcher.start()
    async with asyncio.timeout(5):
        while actions.running < 2:
            actions.started.clear()
            await actions.started.wait()
    stopping = asyncio.create_task(dispatcher.stop())
    await asyncio.sleep(0.05)
    actions.gate.set()  # the two running attempts end during the stop and are recorded
    await stopping

    ran = {uri.strip("/") for uri in actions.calls}
    assert len(ran) == 2
    handed_back = [job for job in store.jobs.values() if job.info.name not in ran]
    assert sorted(store.released) == sorted(f"job{job.info.id}" for job in handed_back)
    for job in handed_back:  # any process may run them now
        assert (job.lease_until, job.info.state) == (clock.now(), JobState.ENABLED)
    for job in store.jobs.values():
        if job.info.name in ran:
            assert job.info.state == JobState.COMPLETED


async def test_an_attempt_taken_over_is_not_recorded_and_the_log_and_metrics_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    refused_before = metrics.ATTEMPTS_NOT_WRITTEN._value.get()
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    taken = store.add("taken", {"action": action("/taken")}, created=T0)
    store.add("kept", {"action": action("/kept")}, created=T0)

    def take_over(uri: str) -> None:
        if uri == "/taken":  # another process took the lease while the action ran
            store.jobs[taken].lease_owner = "other"

    actions.hook = take_over
    assert await engine(store, actions, clock).drain() == 2

    assert [e.job for e in store.history] == ["kept"]
    assert store.jobs[taken].lease_owner == "other"
    assert store.jobs[taken].info.state == JobState.ENABLED
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warned) == 1
    assert warned[0].startswith("1 finished attempts were not written: this node no longer held")
    assert metrics.ATTEMPTS_NOT_WRITTEN._value.get() == refused_before + 1
    assert warned[0].endswith("/taken")  # the job, by collection and name


class SlowRenewals(MemoryRunStore):
    """A store whose first lease renewal takes `slow` seconds; each renewal's start and end
    (the event loop's time) are kept."""

    def __init__(self, slow: float) -> None:
        super().__init__()
        self.slow = slow
        self.renewals: list[tuple[float, float]] = []

    async def renew(self, held: Any, until: Any) -> None:
        loop = asyncio.get_running_loop()
        began = loop.time()
        if not self.renewals:
            await asyncio.sleep(self.slow)
        await super().renew(held, until)
        self.renewals.append((began, loop.time()))


async def _renewals_of_one_attempt(slow: float, renewals: int) -> SlowRenewals:
    """One attempt that runs on under a 3 s lease (renewed every second, the first renewal
    taking `slow` seconds) until its lease was renewed `renewals` times."""
    store, actions, clock = SlowRenewals(slow=slow), ScriptedActions(), FakeClock()
    store.add("held", {"action": action("/held")}, created=T0)
    actions.gate = asyncio.Event()  # the attempt runs on: its lease is renewed meanwhile
    dispatcher = engine(store, actions, clock, lease_seconds=3)
    dispatcher.start()
    try:
        await until(lambda: len(store.renewals) >= renewals)
    finally:
        actions.gate.set()
        await dispatcher.stop()
    return store


async def test_a_slow_lease_renewal_does_not_put_the_next_one_off() -> None:
    """Leases are renewed every third of the lease, counted from the previous renewal's start:
    one that took longer than that is followed at once, not a third of a lease after it ended
    (with short leases and a slow database, a lease would otherwise run out in between)."""
    store = await _renewals_of_one_attempt(slow=1.5, renewals=2)
    (_, first_ended), (second_began, _) = store.renewals[:2]
    assert second_began - first_ended < 0.5  # a third of the lease after it ended is 1 s


@pytest.mark.parametrize(("slow", "warned"), [(0.2, False), (2.0, True)])
async def test_leases_renewed_after_two_thirds_of_a_lease_are_warned_of(
    slow: float, warned: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """The first renewal of a 3 s lease comes after a second and takes `slow` seconds: 1.2 s
    between the claim's lease and the renewal is on time; 3 s is late, and the log says so
    once, naming the lease."""
    await _renewals_of_one_attempt(slow=slow, renewals=3)
    late = [r.getMessage() for r in caplog.records if r.name == "horarium.engine.leases"]
    if not warned:
        assert late == []
        return
    assert len(late) == 1, late
    assert re.match(r"leases were renewed \d+\.\d s after the previous renewal, \d+% of", late[0])
    assert "--lease-seconds (3 s)" in late[0]
    assert late[0].endswith("(raise --lease-seconds or relieve the host)")


class StalledStore(MemoryRunStore):
    """A store whose record transactions wait for `gate` (a database that stopped writing)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.wrote = asyncio.Event()  # set after each record transaction

    async def record(self, attempts: Any, now: Any) -> set[str]:
        await self.gate.wait()
        accepted = await super().record(attempts, now)
        self.wrote.set()
        return accepted


async def test_while_recording_stalls_at_most_two_slots_each_and_a_batch_are_unrecorded() -> None:
    """What a crash re-delivers is what was delivered and not recorded (docs/engine.md, "Crash
    safety"): the dispatcher stops claiming once that reaches 2 x max_in_flight + batch_size,
    however far recording falls behind, and goes on when it catches up."""
    store, actions, clock = StalledStore(), ScriptedActions(), FakeClock()
    for i in range(200):
        store.add(f"j{i}", {"action": action(f"/j{i}")}, created=T0)
    bound = 2 * 10 + 5
    most = 0

    def unrecorded(uri: str) -> None:
        nonlocal most
        most = max(most, len(actions.calls) - len(store.history))

    actions.hook = unrecorded
    dispatcher = engine(store, actions, clock, max_in_flight=10, batch_size=5)
    dispatcher.start()
    for _ in range(2000):  # event-loop turns: every claim and action here completes in a few
        await asyncio.sleep(0)
    stalled = len(actions.calls)
    assert store.history == []
    assert 10 < stalled <= bound  # beyond the slots (they free at once), then it stopped

    store.gate.set()
    async with asyncio.timeout(30):
        while len(store.history) < 200:
            store.wrote.clear()
            await store.wrote.wait()
    await dispatcher.stop()
    assert sorted(actions.calls) == sorted(f"/j{i}" for i in range(200))
    assert most <= bound


class LateLookStore(MemoryRunStore):
    """A store whose look for the next due time is slow: the clock passes `step` meanwhile
    (a loaded database answering the query after the round's claim)."""

    def __init__(self, clock: FakeClock, step: timedelta) -> None:
        super().__init__()
        self.clock = clock
        self.step = step

    async def next_due(self, full: Any = ()) -> Any:
        found = await super().next_due(full)
        self.clock.advance(seconds=self.step.total_seconds())
        return found


async def test_work_falling_due_between_the_claim_and_the_next_look_starts_at_once() -> None:
    """The round's claim looked up to its horizon; the job fell due just after it, by the time
    the look for the next due time answered. It runs at once, not a poll interval later (here
    an hour: the wait below would give up first)."""
    clock = FakeClock(T0 - timedelta(milliseconds=100))
    store, actions = LateLookStore(clock, timedelta(milliseconds=200)), ScriptedActions()
    store.add("j", {"action": action("/j"), "startTime": T0.isoformat()}, created=T0)
    dispatcher = engine(store, actions, clock, poll_interval=3600)
    dispatcher.start()
    try:
        async with asyncio.timeout(10):
            while not actions.calls:
                actions.started.clear()
                await actions.started.wait()
    finally:
        await dispatcher.stop()
    assert actions.calls == ["/j"]


def due_at(offset: timedelta) -> dict[str, Any]:
    return {"startTime": (T0 + offset).isoformat()}


def opened() -> asyncio.Event:
    gate = asyncio.Event()
    gate.set()
    return gate


async def test_a_lone_busy_collection_runs_max_in_flight_attempts_at_once() -> None:
    """Its first attempts end at once, so the collection is quick and its burst takes every
    slot (its other attempts wait for a gate, so that the slots stay taken)."""
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    for i in range(60):
        store.add(f"j{i}", {"action": action(f"/j{i}")}, created=T0)
    actions.gate = asyncio.Event()
    actions.gates = {"/j0": opened(), "/j1": opened()}
    dispatcher = engine(store, actions, clock, max_in_flight=20, batch_size=5)
    dispatcher.start()
    try:
        await until(lambda: actions.running == 20)
        assert dispatcher.in_flight == 20
    finally:
        actions.gate.set()
        await dispatcher.stop()
    assert actions.most_running == 20


async def test_hung_collections_leave_a_slot_to_a_newcomer_whose_job_falls_due() -> None:
    """Five collections whose endpoints never answer, 150 executions: together they take the
    pool (90 of 100 slots) and a slot of the reserve each at most; a newcomer's job, due later,
    starts when it falls due."""
    store, actions, clock = MemoryRunStore(), ScriptedActions(), FakeClock()
    for collection in range(1, 6):
        for i in range(30):
            store.add(f"h{collection}-{i}", {"action": action(f"/h{collection}")}, T0, collection)
    store.add("p", {"action": action("/p"), **due_at(timedelta(seconds=1))}, T0, collection=9)
    actions.gate = asyncio.Event()  # the hung collections never answer
    actions.gates = {"/p": opened()}
    dispatcher = engine(store, actions, clock, max_in_flight=100, batch_size=20)
    dispatcher.start()
    try:
        await until(lambda: actions.running >= 90)  # the pool
        clock.advance(seconds=1)
        dispatcher.wake()
        await until(lambda: "/p" in actions.calls)
        assert len(actions.calls) - 1 <= 90 + 5  # the pool and a slot of the reserve each
    finally:
        actions.gate.set()
        await dispatcher.stop()


async def test_what_a_collection_holds_beyond_its_share_waits_once_it_turns_suspect() -> None:
    """A quick collection held every slot, and ready executions ahead of another collection's,
    when its attempts began to hang. The slot its ending attempt frees goes to the other
    collection's execution; its own ready ones wait (parked)."""
    store, actions, clock, timer = MemoryRunStore(), ScriptedActions(), FakeClock(), Timer()
    for i in range(30):
        offset = 0 if i < 12 else 100 if i < 16 else 300  # milliseconds
        store.add(
            f"a{i}", {"action": action(f"/a{i}"), **due_at(timedelta(milliseconds=offset))}, T0
        )
    other = store.add("p", {"action": action("/p"), **due_at(timedelta(milliseconds=200))}, T0, 2)
    actions.gate = asyncio.Event()
    ends = asyncio.Event()
    actions.gates = {"/a0": opened(), "/a1": opened(), "/a2": ends, "/p": opened()}
    dispatcher = engine(store, actions, clock, timer, max_in_flight=10, batch_size=5)
    dispatcher.start()
    try:
        await until(lambda: actions.running == 10)  # a2 … a11: the collection is quick
        clock.advance(milliseconds=250)
        dispatcher.wake()  # claims a12 … a15, then p: ready, behind them
        await until(lambda: store.jobs[other].lease_owner is not None)
        assert "/p" not in actions.calls
        timer.now += 2.0  # every running attempt of the collection is slow now: suspect
        ends.set()  # a2 ends
        await until(lambda: "/p" in actions.calls)
        await until(lambda: actions.running == 9)  # p ended; a3 … a11 run
        assert not {"/a12", "/a13", "/a14", "/a15"} & set(actions.calls)
    finally:
        actions.gate.set()
        await dispatcher.stop()
