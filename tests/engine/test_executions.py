"""What a user of the scheduler notices: jobs run on time, retry, fall back to the error action,
end Completed or Faulted, and leave exact history and status — on SQLite and PostgreSQL, against
a real HTTP server, with a clock the test moves (the engine's `drain` runs what is due)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.api import collection_ops, job_ops
from horarium.engine.scheduler import Scheduler
from horarium.model.actions import WireStyle
from horarium.model.names import CollectionName
from horarium.recurrence.calendars import MAX_ICAL_STEPS
from horarium.store.core.schema import jobs
from tests.engine.engine_support import T0, FakeClock, Sink, Store, http

S = timedelta(seconds=1)
M = timedelta(minutes=1)


async def assert_counters_match_history(store: Store, job_id: int) -> None:
    """executionCount = attempts in history, failureCount = failed ones."""
    job = await store.job(job_id)
    history = await store.history(job_id)
    ran = [h for h in history if h.status != "Postponed"]
    assert job.execution_count == len(ran)
    assert job.failure_count == len([h for h in ran if h.status == "Failed"])


async def test_one_time_job_runs_once_at_its_start_time(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add(
        "once", {"startTime": (T0 + 10 * S).isoformat(), "action": http(sink.to("/once"))}
    )
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 0  # not due yet
    assert sink.on("/once") == []

    clock.advance(seconds=10)
    assert await scheduler.drain() == 1
    assert await scheduler.drain() == 0  # and only once

    [hit] = sink.on("/once")
    assert hit.body == "hi"
    [entry] = await store.history(job)
    assert entry.action_name == "MainAction"
    assert entry.status == "Completed"
    assert (entry.retry_count, entry.repeat_count) == (0, 1)
    assert entry.expected_execution_time == T0 + 10 * S
    assert entry.start_time == T0 + 10 * S
    assert "answer 200 from /once" in entry.message
    assert hit.headers["x-ms-execution-tag"] == entry.execution_tag
    row = await store.job(job)
    assert row.state == "Completed"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (1, 0, 0)
    assert row.last_execution_at == T0 + 10 * S
    assert row.next_execution_at is None
    assert row.ended_at == T0 + 10 * S
    assert await store.pending(job) == []


async def test_failed_attempt_is_retried_with_the_same_tag_then_succeeds(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.plan("/flaky", 500, 200)
    policy = {"retryType": "Fixed", "retryInterval": "00:00:20", "retryCount": 3}
    job = await store.add("flaky", {"action": http(url, retryPolicy=policy)})
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()
    [failed] = await store.history(job)
    assert failed.status == "Failed"
    assert "500" in failed.message
    row = await store.job(job)
    assert (row.state, row.execution_count, row.failure_count) == ("Enabled", 1, 1)

    clock.advance(seconds=19)
    assert await scheduler.drain() == 0  # the retry waits its interval
    clock.advance(seconds=1)
    assert await scheduler.drain() == 1

    completed, failed = await store.history(job)
    assert (completed.status, completed.retry_count, completed.repeat_count) == ("Completed", 1, 1)
    assert completed.start_time == T0 + 20 * S
    assert completed.execution_tag == failed.execution_tag
    first, second = sink.on("/flaky")
    assert first.headers["x-ms-execution-tag"] == second.headers["x-ms-execution-tag"]
    assert first.headers["x-ms-client-request-id"] != second.headers["x-ms-client-request-id"]
    row = await store.job(job)
    assert row.state == "Completed"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (2, 1, 0)
    await assert_counters_match_history(store, job)


async def test_error_action_runs_when_every_attempt_failed(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    main = sink.plan("/down", 503)
    fallback = sink.to("/fallback")
    policy = {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}
    job = await store.add(
        "fallback", {"action": http(main, retryPolicy=policy, errorAction=http(fallback))}
    )
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()
    assert len(sink.on("/down")) == 1 and sink.on("/fallback") == []
    clock.advance(seconds=15)
    await scheduler.drain()  # last main attempt fails; the error action follows at once

    assert len(sink.on("/down")) == 2
    [hit] = sink.on("/fallback")
    entries = await store.history(job)
    assert [(e.action_name, e.status, e.retry_count) for e in entries] == [
        ("ErrorAction", "Completed", 0),
        ("MainAction", "Failed", 1),
        ("MainAction", "Failed", 0),
    ]
    assert hit.headers["x-ms-execution-tag"] == entries[-1].execution_tag
    row = await store.job(job)
    # The main action failed its last allowed attempt: the execution faulted, whatever the
    # error action then did (the spec's faultedCount), so the one-time job is Faulted.
    assert (row.state, row.faulted_count) == ("Faulted", 1)
    assert row.ended_at == T0 + 15 * S
    await assert_counters_match_history(store, job)


async def test_an_execution_whose_error_action_succeeds_still_counts_as_faulted(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    # A recurring job whose main action always fails (no retries) and whose error action
    # delivers: each execution is faulted once, the job carries on.
    job = await store.add(
        "rescued",
        {
            "action": http(
                sink.plan("/broken", 500),
                retryPolicy={"retryType": "None"},
                errorAction=http(sink.to("/rescue")),
            ),
            "recurrence": {"frequency": "Minute", "interval": 1},
        },
    )
    scheduler: Scheduler = make_scheduler()
    for _ in range(3):
        await scheduler.drain()
        clock.advance(minutes=1)

    assert len(sink.on("/rescue")) == 3
    row = await store.job(job)
    assert (row.state, row.execution_count, row.failure_count, row.faulted_count) == (
        "Enabled",
        6,
        3,
        3,
    )
    await assert_counters_match_history(store, job)


async def test_one_time_job_faults_when_main_and_error_action_all_fail(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    main = sink.plan("/main", 500)
    fallback = sink.plan("/err", 404)
    policy = {"retryType": "Fixed", "retryInterval": "00:00:15", "retryCount": 1}
    job = await store.add(
        "doomed", {"action": http(main, retryPolicy=policy, errorAction=http(fallback))}
    )
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()
    clock.advance(seconds=15)
    await scheduler.drain()
    row = await store.job(job)
    assert row.state == "Enabled"  # the error action's retry is still to come
    clock.advance(seconds=15)
    await scheduler.drain()

    entries = await store.history(job)
    # The error action has no retryPolicy of its own: it uses the main action's.
    assert [(e.action_name, e.retry_count, e.status) for e in reversed(entries)] == [
        ("MainAction", 0, "Failed"),
        ("MainAction", 1, "Failed"),
        ("ErrorAction", 0, "Failed"),
        ("ErrorAction", 1, "Failed"),
    ]
    row = await store.job(job)
    assert row.state == "Faulted"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (4, 4, 1)
    assert row.ended_at == T0 + 30 * S
    await assert_counters_match_history(store, job)


async def test_absent_retry_policy_means_four_retries_thirty_seconds_apart(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add("default", {"action": http(sink.plan("/x", 500))})
    scheduler: Scheduler = make_scheduler()
    for _ in range(6):
        await scheduler.drain()
        clock.advance(seconds=30)

    entries = list(reversed(await store.history(job)))
    assert [e.retry_count for e in entries] == [0, 1, 2, 3, 4]
    assert [e.start_time for e in entries] == [T0 + k * 30 * S for k in range(5)]
    row = await store.job(job)
    assert (row.state, row.execution_count, row.failure_count, row.faulted_count) == (
        "Faulted",
        5,
        5,
        1,
    )


async def test_retry_type_none_makes_one_attempt(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.plan("/once-only", 500)
    job = await store.add("none", {"action": http(url, retryPolicy={"retryType": "None"})})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    clock.advance(minutes=5)
    await scheduler.drain()
    assert len(sink.on("/once-only")) == 1
    assert (await store.job(job)).state == "Faulted"


async def test_recurring_job_completes_when_its_count_is_reached(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add(
        "thrice",
        {
            "action": http(sink.to("/tick")),
            "recurrence": {"frequency": "Minute", "interval": 1, "count": 3},
        },
    )
    scheduler: Scheduler = make_scheduler()
    nexts = []
    for _ in range(5):
        await scheduler.drain()
        nexts.append((await store.job(job)).next_execution_at)
        clock.advance(minutes=1)

    assert nexts == [T0 + M, T0 + 2 * M, None, None, None]
    entries = list(reversed(await store.history(job)))
    assert [(e.repeat_count, e.expected_execution_time) for e in entries] == [
        (1, T0),
        (2, T0 + M),
        (3, T0 + 2 * M),
    ]
    row = await store.job(job)
    assert (row.state, row.execution_count, row.ended_at) == ("Completed", 3, T0 + 2 * M)


async def test_recurring_job_completes_at_its_end_time(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add(
        "until",
        {
            "action": http(sink.to("/until")),
            "recurrence": {
                "frequency": "Minute",
                "interval": 1,
                "endTime": (T0 + 2 * M + 30 * S).isoformat(),
            },
        },
    )
    scheduler: Scheduler = make_scheduler()
    for _ in range(5):
        await scheduler.drain()
        clock.advance(minutes=1)
    assert len(sink.on("/until")) == 3
    assert (await store.job(job)).state == "Completed"


async def test_faulted_occurrence_does_not_fault_a_recurring_job(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.plan("/broken", 500)
    job = await store.add(
        "keeps-going",
        {
            "action": http(url, retryPolicy={"retryType": "None"}),
            "recurrence": {"frequency": "Minute", "interval": 1},
        },
    )
    scheduler: Scheduler = make_scheduler()
    for _ in range(3):
        await scheduler.drain()
        clock.advance(minutes=1)
    row = await store.job(job)
    assert (row.state, row.execution_count, row.failure_count, row.faulted_count) == (
        "Enabled",
        3,
        3,
        3,
    )
    assert row.next_execution_at == T0 + 3 * M


async def test_disabled_job_does_not_run_and_resumes_at_its_next_future_execution(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add(
        "pausable",
        {"action": http(sink.to("/p")), "recurrence": {"frequency": "Minute", "interval": 1}},
    )
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    await store.set_state(job, "Disabled", clock.advance(seconds=30))
    for _ in range(3):
        clock.advance(minutes=1)
        await scheduler.drain()
    assert len(sink.on("/p")) == 1

    await store.set_state(job, "Enabled", clock.advance(seconds=30))  # T0 + 4 min
    assert (await store.job(job)).next_execution_at == T0 + 4 * M
    await scheduler.drain()
    assert len(sink.on("/p")) == 2  # the execution due at enable time; no burst of old ones
    [latest, _] = await store.history(job)
    assert latest.expected_execution_time == T0 + 4 * M
    assert all(e.status != "Postponed" for e in await store.history(job))


async def test_disabling_a_job_stops_its_pending_retries(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add("stop-retrying", {"action": http(sink.plan("/no", 500))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    await store.set_state(job, "Disabled", clock.advance(seconds=10))
    clock.advance(minutes=5)
    await scheduler.drain()
    assert len(sink.on("/no")) == 1
    assert await store.pending(job) == []
    assert (await store.job(job)).state == "Disabled"


async def _patch_state(db: AsyncEngine, name: str, state: str, now: datetime) -> None:
    """PATCH the job's state through the management API's own operation."""
    async with db.begin() as conn:
        await job_ops.patch(
            conn,
            CollectionName("sub", "rg", "coll"),
            name,
            {"properties": {"state": state}},
            WireStyle(),
            now,
        )


async def test_enabling_again_before_a_pending_retry_keeps_the_job_enabled_until_it_ends(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    # A one-time job's first attempt failed; its retry is due in 30 s. Disabled and enabled
    # again before then, the job is not Completed: the retry runs, then the job completes.
    job = await store.add("flaky", {"action": http(sink.plan("/f", 500, 200))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    await _patch_state(db, "flaky", "Disabled", clock.advance(seconds=5))
    await _patch_state(db, "flaky", "Enabled", clock.advance(seconds=5))
    assert (await store.job(job)).state == "Enabled"

    clock.advance(seconds=30)
    await scheduler.drain()
    assert len(sink.on("/f")) == 2
    row = await store.job(job)
    assert (row.state, row.execution_count, row.failure_count) == ("Completed", 2, 1)


async def test_enabling_again_after_the_retry_was_dropped_completes_the_job(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    # Disabled while its retry fell due: the retry is dropped, so enabling finds nothing left.
    job = await store.add("dropped", {"action": http(sink.plan("/d", 500))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    await _patch_state(db, "dropped", "Disabled", clock.advance(seconds=5))
    clock.advance(seconds=60)
    await scheduler.drain()
    await _patch_state(db, "dropped", "Enabled", clock.advance(seconds=5))
    assert len(sink.on("/d")) == 1
    assert (await store.job(job)).state == "Completed"


async def test_enabling_the_collection_again_before_a_pending_retry_keeps_the_job_enabled(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    # The same through the collection: POST …/disable, then …/enable before the retry is due.
    job = await store.add("flaky-member", {"action": http(sink.plan("/m", 500, 200))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    for state in ("Disabled", "Enabled"):
        async with db.begin() as conn:
            await collection_ops.set_state(
                conn, CollectionName("sub", "rg", "coll"), state, clock.advance(seconds=5)
            )
    assert (await store.job(job)).state == "Enabled"

    clock.advance(seconds=30)
    await scheduler.drain()
    assert len(sink.on("/m")) == 2
    assert (await store.job(job)).state == "Completed"


async def test_a_stored_calendar_too_costly_to_expand_faults_the_job_saying_why(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any, db: AsyncEngine
) -> None:
    # A document stored before its expansion was counted: its rule never matches, so
    # python-dateutil alone would search to the year 9999 inside the claim.
    never = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:never\r\n"
        "DTSTART:20200101T090000Z\r\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31\r\nEND:VEVENT\r\n"
        "END:VCALENDAR\r\n"
    )
    definition: dict[str, Any] = {
        "action": http(sink.to("/legacy")),
        "recurrence": {"frequency": "Minute", "interval": 1, "excludeCalendars": ["c"]},
        "resolvedCalendars": {"c": {"weekends": False}},
    }
    job = await store.add("legacy", definition)
    definition["resolvedCalendars"] = {"c": {"ical": never}}
    async with db.begin() as conn:
        await conn.execute(update(jobs).where(jobs.c.id == job).values(definition=definition))
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()

    assert sink.on("/legacy") == []
    row = await store.job(job)
    assert (row.state, row.next_execution_at) == ("Faulted", None)
    [entry] = await store.history(job)
    assert "The job's schedule cannot be computed" in entry.message
    assert f"calendars.c.ical: its recurring events take more than {MAX_ICAL_STEPS}" in (
        entry.message
    )
