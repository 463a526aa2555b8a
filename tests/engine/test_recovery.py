"""Never lose a run: missed executions after downtime, run-now requests, executions held by a
process that died, several processes on one database, and writes racing an API redefinition."""

from __future__ import annotations

import asyncio
from datetime import UTC, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.api import job_ops
from horarium.engine.scheduler import Scheduler
from horarium.model.actions import WireStyle
from horarium.model.names import CollectionName
from horarium.store.core.schema import job_executions, job_history, jobs
from horarium.store.resources.run_requests import request_run
from tests.engine.engine_support import T0, FakeClock, Sink, Store, engine_settings, http

S = timedelta(seconds=1)
M = timedelta(minutes=1)

EVERY_MINUTE = {"frequency": "Minute", "interval": 1}


async def test_missed_executions_run_once_and_the_others_are_postponed(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add("minutely", {"action": http(sink.to("/m")), "recurrence": EVERY_MINUTE})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()  # T0 runs

    clock.set(T0 + 10 * M + 30 * S)  # the service was down for ten minutes
    assert await scheduler.drain() == 1

    assert len(sink.on("/m")) == 2  # no burst
    entries = await store.history(job)
    ran, *postponed, first = entries
    assert (ran.status, ran.expected_execution_time, ran.repeat_count) == (
        "Completed",
        T0 + 10 * M,
        11,
    )
    assert [(p.status, p.expected_execution_time, p.repeat_count) for p in reversed(postponed)] == [
        ("Postponed", T0 + k * M, k + 1) for k in range(1, 10)
    ]
    assert "missed" in postponed[0].message and "09:10:00Z" in postponed[0].message
    assert first.expected_execution_time == T0
    row = await store.job(job)
    assert row.next_execution_at == T0 + 11 * M
    assert row.execution_count == 2  # Postponed executions did not run


async def test_a_late_execution_within_the_grace_period_just_runs(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add("late", {"action": http(sink.to("/l")), "recurrence": EVERY_MINUTE})
    scheduler: Scheduler = make_scheduler(grace_period=60)
    await scheduler.drain()
    clock.set(T0 + M + 50 * S)  # 50 s late: not missed
    await scheduler.drain()
    latest, _ = await store.history(job)
    assert (latest.status, latest.expected_execution_time) == ("Completed", T0 + M)
    assert (await store.job(job)).next_execution_at == T0 + 2 * M


async def test_missed_executions_respect_the_recurrence_count(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    recurrence = {**EVERY_MINUTE, "count": 4}
    job = await store.add("four", {"action": http(sink.to("/4")), "recurrence": recurrence})
    scheduler: Scheduler = make_scheduler()
    clock.set(T0 + 30 * M)
    await scheduler.drain()
    entries = list(reversed(await store.history(job)))
    assert [(e.status, e.repeat_count) for e in entries] == [
        ("Postponed", 1),
        ("Postponed", 2),
        ("Postponed", 3),
        ("Completed", 4),
    ]
    assert entries[-1].expected_execution_time == T0 + 3 * M
    assert (await store.job(job)).state == "Completed"


async def test_a_month_of_missed_minutes_writes_at_most_the_history_limit(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add(
        "monthly-gap", {"action": http(sink.to("/g")), "recurrence": EVERY_MINUTE}
    )
    scheduler: Scheduler = make_scheduler()
    clock.set(T0 + timedelta(days=30))
    await scheduler.drain()
    entries = await store.history(job)
    ran, postponed = entries[0], entries[1:]
    assert len(sink.on("/g")) == 1
    assert len(postponed) == 1000
    total_missed = 30 * 24 * 60  # executions due T0 .. T0 + 30 days, the last one ran
    assert ran.repeat_count == total_missed + 1
    assert (
        f"{total_missed - 1000} earlier missed executions are not listed" in postponed[-1].message
    )
    assert (await store.job(job)).next_execution_at == T0 + timedelta(days=30, minutes=1)


async def test_run_now_runs_immediately_and_leaves_the_schedule_alone(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    job = await store.add(
        "hourly",
        {
            "startTime": (T0 + 30 * M).isoformat(),
            "action": http(sink.to("/now")),
            "recurrence": {"frequency": "Hour", "interval": 1},
        },
    )
    scheduler: Scheduler = make_scheduler()
    async with db.begin() as conn:
        await request_run(conn, job, clock.now())
    assert await scheduler.drain() == 1

    [entry] = await store.history(job)
    assert (entry.status, entry.repeat_count, entry.expected_execution_time) == (
        "Completed",
        0,
        T0,
    )
    row = await store.job(job)
    assert (row.state, row.next_execution_at, row.next_repeat) == ("Enabled", T0 + 30 * M, 1)
    assert row.execution_count == 1


async def test_run_now_of_a_completed_job_keeps_it_completed(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    job = await store.add("done", {"action": http(sink.to("/done"))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    assert (await store.job(job)).state == "Completed"
    clock.advance(minutes=1)
    async with db.begin() as conn:
        await request_run(conn, job, clock.now())
    await scheduler.drain()
    assert len(sink.on("/done")) == 2
    row = await store.job(job)
    assert (row.state, row.execution_count) == ("Completed", 2)


async def test_execution_held_by_a_dead_process_runs_again_with_the_same_tag(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    job = await store.add("survivor", {"action": http(sink.to("/s"))})
    settings = engine_settings(lease_seconds=30)
    dead = Scheduler(db, settings, actions, clock=clock, owner="dead")
    # The dead process made the execution (and maybe sent the request), then crashed.
    [held] = await dead.runs.claim(
        clock.now(), 10, lambda: clock.now() + timedelta(seconds=30), dead.decider.at(clock.now())
    )

    heir = Scheduler(db, settings, actions, clock=clock, owner="heir")
    clock.advance(seconds=29)
    assert await heir.drain() == 0  # the lease still holds
    clock.advance(seconds=2)
    assert await heir.drain() == 1

    [hit] = sink.on("/s")
    assert hit.headers["x-ms-execution-tag"] == held.tag
    [entry] = await store.history(job)
    assert (entry.execution_tag, entry.expected_execution_time) == (held.tag, T0)
    assert (await store.job(job)).state == "Completed"


async def test_a_process_that_lost_its_lease_does_not_record_twice(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    job = await store.add("contested", {"action": http(sink.to("/c"))})
    settings = engine_settings(lease_seconds=30)
    slow = Scheduler(db, settings, actions, clock=clock, owner="slow")
    [held] = await slow.runs.claim(
        clock.now(), 10, lambda: clock.now() + timedelta(seconds=30), slow.decider.at(clock.now())
    )
    clock.advance(seconds=31)
    heir = Scheduler(db, settings, actions, clock=clock, owner="heir")
    await heir.drain()  # takes over and finishes the execution

    from horarium.engine.attempt import run_attempt
    from horarium.engine.watchdog import Watchdog

    late = await run_attempt(actions, held, clock, "r", Watchdog(5))
    assert await slow.runs.record([late], clock.now()) == set()
    assert len(await store.history(job)) == 1
    assert (await store.job(job)).execution_count == 1


async def test_a_claim_kept_busy_still_hands_out_whole_leases(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    """Each lease a claim writes runs a whole lease from when it is written, not from when the
    claim began: a claim slowed down (a busy process, a slow database) would otherwise hand out
    leases already partly spent, and with short leases another node could take the executions
    before the first renewal and run them again."""
    due = await store.add("due", {"action": http(sink.to("/d"))})
    asked = await store.add(
        "asked", {"action": http(sink.to("/a")), "startTime": "2090-01-01T00:00:00Z"}
    )
    async with db.begin() as conn:
        await request_run(conn, asked, clock.now())
    busy = Scheduler(db, engine_settings(lease_seconds=30), actions, clock=clock, owner="busy")
    decide = busy.decider.at(clock.now())

    def slow_decide(job: Any) -> Any:
        clock.advance(seconds=20)  # the claim spends 20 s deciding the due job's execution
        return decide(job)

    began, lease = clock.now(), timedelta(seconds=30)
    claimed = await busy.runs.claim(began, 10, lambda: clock.now() + lease, slow_decide)

    assert sorted(c.job.id for c in claimed) == sorted([due, asked])
    assert (await store.job(due)).lease_expires_at == began + 20 * S + lease
    async with db.connect() as conn:
        [run_lease] = (
            await conn.execute(
                select(job_executions.c.due_at).where(job_executions.c.job_id == asked)
            )
        ).scalars()
    assert run_lease.replace(tzinfo=UTC) == began + lease  # leased before the decision


async def test_two_processes_share_due_work_without_running_anything_twice(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    ids = [await store.add(f"j{i}", {"action": http(sink.to(f"/j{i}"))}) for i in range(120)]
    settings = engine_settings(batch_size=7, max_in_flight=20)
    one = Scheduler(db, settings, actions, clock=clock, owner="one")
    two = Scheduler(db, settings, actions, clock=clock, owner="two")
    counts = await asyncio.gather(one.drain(), two.drain())
    assert sum(counts) == 120
    assert sorted(h.path for h in sink.hits) == sorted(f"/j{i}" for i in range(120))
    async with db.connect() as conn:
        done = (
            await conn.execute(select(func.count()).where(jobs.c.state == "Completed"))
        ).scalar()
        entries = (await conn.execute(select(func.count()).select_from(job_history))).scalar()
    assert (done, entries) == (len(ids), 120)


async def test_redefining_a_job_while_it_runs_keeps_the_new_schedule(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    sink.delay = 0.3
    job = await store.add("redefined", {"action": http(sink.to("/r"))})
    scheduler: Scheduler = make_scheduler()
    running = asyncio.create_task(scheduler.drain())
    await sink.wait_hits(1)
    # A PUT arrives while the one-time execution is in flight: a new start in an hour.
    async with db.begin() as conn:
        await conn.execute(
            update(jobs)
            .where(jobs.c.id == job)
            .values(version=jobs.c.version + 1, next_execution_at=T0 + 60 * M, next_repeat=1)
        )
    await running
    row = await store.job(job)
    assert (row.state, row.next_execution_at) == ("Enabled", T0 + 60 * M)
    assert row.execution_count == 1  # the execution that ran is still counted


async def test_a_one_time_job_disabled_while_it_runs_is_not_run_again_when_enabled(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    sink.delay = 0.3
    job = await store.add("paused", {"action": http(sink.to("/p"))})
    scheduler: Scheduler = make_scheduler()
    running = asyncio.create_task(scheduler.drain())
    await sink.wait_hits(1)
    await store.set_state(job, "Disabled", clock.now())  # while its one execution runs
    await running
    async with db.begin() as conn:  # PATCH state Enabled, through the API's own operation
        await job_ops.patch(
            conn,
            CollectionName("sub", "rg", "coll"),
            "paused",
            {"properties": {"state": "Enabled"}},
            WireStyle(),
            clock.advance(minutes=1),
        )
    assert await scheduler.drain() == 0
    assert len(sink.on("/p")) == 1
    row = await store.job(job)
    assert (row.state, row.execution_count, row.next_execution_at) == ("Completed", 1, None)


async def test_deleting_a_job_while_it_runs_is_harmless(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    sink.delay = 0.3
    job = await store.add("deleted", {"action": http(sink.to("/d"))})
    other = await store.add("other", {"action": http(sink.to("/o"))})
    scheduler: Scheduler = make_scheduler()
    running = asyncio.create_task(scheduler.drain())
    await sink.wait_hits(2)
    async with db.begin() as conn:
        await conn.execute(delete(jobs).where(jobs.c.id == job))
    await running
    assert await store.history(job) == []
    assert len(await store.history(other)) == 1


async def test_stopping_hands_running_executions_back_for_an_immediate_rerun(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    sink.delay = 30  # never answers in time
    job = await store.add("interrupted", {"action": http(sink.to("/i"))})
    settings = engine_settings(lease_seconds=300, drain_seconds=0.1)
    first = Scheduler(db, settings, actions, clock=clock, owner="first")
    first.start()
    await sink.wait_hits(1)
    await first.stop()  # running attempts get drain_seconds
    row = await store.job(job)
    assert row.lease_expires_at <= clock.now()  # handed back
    assert row.next_execution_at == T0  # still the execution in flight

    sink.delay = 0
    second = Scheduler(db, settings, actions, clock=clock, owner="second")
    assert await second.drain() == 1  # no need to wait for the 300 s lease
    tags = {h.headers["x-ms-execution-tag"] for h in sink.on("/i")}
    assert len(tags) == 1
    assert (await store.job(job)).state == "Completed"


async def test_an_execution_in_flight_is_replayed_even_when_found_long_after(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    job = await store.add("minutely", {"action": http(sink.to("/f")), "recurrence": EVERY_MINUTE})
    settings = engine_settings(lease_seconds=300)
    dead = Scheduler(db, settings, actions, clock=clock, owner="dead")
    [held] = await dead.runs.claim(
        clock.now(), 10, lambda: clock.now() + timedelta(seconds=300), dead.decider.at(clock.now())
    )  # then it crashed

    clock.set(T0 + 5 * M + 1 * S)  # the lease ran out; everything since T0 is overdue
    heir = Scheduler(db, settings, actions, clock=clock, owner="heir")
    await heir.drain()

    entries = list(reversed(await store.history(job)))
    # The execution in flight runs (same tag), not Postponed; the ones after it were missed.
    assert (entries[0].status, entries[0].expected_execution_time) == ("Completed", T0)
    assert entries[0].execution_tag == held.tag
    assert [(e.status, e.expected_execution_time) for e in entries[1:]] == [
        *[("Postponed", T0 + k * M) for k in range(1, 5)],
        ("Completed", T0 + 5 * M),
    ]
    assert (await store.job(job)).next_execution_at == T0 + 6 * M


def _gone_owner() -> str:
    """The owner id of a process of this host that has exited."""
    import socket
    import subprocess

    finished = subprocess.Popen(["true"])
    finished.wait()
    return f"{socket.gethostname()[:60]}:{finished.pid}:0123abcd"


async def test_a_restarted_process_takes_over_at_once_from_its_dead_predecessor(
    store: Store, sink: Sink, clock: FakeClock, db: AsyncEngine, actions: Actions
) -> None:
    job = await store.add("first", {"action": http(sink.to("/a"))})
    retrying = await store.add("second", {"action": http(sink.plan("/b", 500, 200))})
    settings = engine_settings(lease_seconds=300)
    dead = Scheduler(db, settings, actions, clock=clock, owner=_gone_owner())
    await dead.drain()  # /a done; /b failed once, its retry is due in 30 s
    assert (await store.job(job)).state == "Completed"
    clock.advance(seconds=30)
    [retry] = await dead.runs.claim(
        clock.now(), 10, lambda: clock.now() + timedelta(seconds=300), dead.decider.at(clock.now())
    )  # then died
    assert retry.job.id == retrying

    heir = Scheduler(db, settings, actions, clock=clock)  # a real owner id, this process
    assert await heir.drain() == 1  # no waiting for the 300 s lease
    assert len(sink.on("/b")) == 2
    assert (await store.job(retrying)).state == "Completed"


def test_only_processes_known_to_be_gone_lose_their_leases() -> None:
    import os
    import socket

    from horarium.engine.owners import is_gone, owner_id

    me = owner_id()
    host = socket.gethostname()[:60]
    assert not is_gone(me, me)
    assert not is_gone(f"{host}:{os.getppid()}:ffffffff", me)  # alive
    assert is_gone(_gone_owner(), me)
    assert is_gone(f"{host}:{os.getpid()}:ffffffff", me)  # our pid, an earlier incarnation
    assert not is_gone(f"elsewhere:{os.getpid() + 1}:ffffffff", me)  # another host: unknown
    assert not is_gone("garbage", me)
