"""`executionPolicy` (Horarium) through the real engine on SQLite and PostgreSQL: overlapping
executions (Skip, BufferOne) and missed executions (RunAll, Skip), with a clock the test moves."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from horarium.engine.scheduler import Scheduler
from horarium.store.resources import run_requests
from tests.engine.engine_support import T0, FakeClock, Sink, Store, http

S = timedelta(seconds=1)
M = timedelta(minutes=1)


def minutely(url: str, retry_interval: str, **policy: str) -> dict[str, Any]:
    """A job every minute from T0 whose failed attempt is retried once after `retry_interval`."""
    retry = {"retryType": "Fixed", "retryInterval": retry_interval, "retryCount": 1}
    return {
        "startTime": T0.isoformat(),
        "action": http(url, retryPolicy=retry),
        "recurrence": {"frequency": "Minute", "interval": 1},
        "executionPolicy": policy,
    }


async def test_overlap_skip_records_an_execution_due_during_a_pending_retry_as_skipped(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.plan("/skip", 500, 200)
    job = await store.add("skip", minutely(url, "00:01:30", overlap="Skip"))
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1  # T0 fails; its retry is due at T0+90s
    clock.set(T0 + M)
    assert await scheduler.drain() == 0  # T0+1m falls due while the retry waits
    [skipped, failed] = await store.history(job)
    assert failed.status == "Failed"
    assert (skipped.status, skipped.repeat_count) == ("Skipped", 2)
    assert skipped.expected_execution_time == T0 + M
    assert "previous execution (expected at 2030-01-07T09:00:00Z)" in skipped.message
    assert "executionPolicy.overlap is Skip" in skipped.message
    row = await store.job(job)
    assert (row.next_execution_at, row.next_repeat) == (T0 + 2 * M, 3)
    assert (row.execution_count, row.failure_count) == (1, 1)  # Skipped is no attempt

    clock.set(T0 + 90 * S)
    assert await scheduler.drain() == 1  # the retry succeeds: the execution ends
    clock.set(T0 + 2 * M)
    assert await scheduler.drain() == 1  # nothing unfinished: it runs
    statuses = [(h.status, h.repeat_count, h.retry_count) for h in await store.history(job)]
    assert statuses == [
        ("Completed", 3, 0),
        ("Completed", 1, 1),
        ("Skipped", 2, 0),
        ("Failed", 1, 0),
    ]
    assert len(sink.on("/skip")) == 3


async def test_overlap_allow_by_default_runs_an_execution_due_during_a_pending_retry(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.plan("/allow", 500, 200)
    job = await store.add("allow", minutely(url, "00:01:30"))
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()
    clock.set(T0 + M)
    assert await scheduler.drain() == 1
    assert [h.status for h in await store.history(job)] == ["Completed", "Failed"]


async def test_overlap_buffer_one_runs_the_first_waiting_execution_when_the_previous_ends(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.plan("/buffer", 500, 200)
    job = await store.add("buffer", minutely(url, "00:02:30", overlap="BufferOne"))
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()  # T0 fails; its retry is due at T0+150s
    clock.set(T0 + M)
    assert await scheduler.drain() == 0  # T0+1m waits for it
    [queued] = [p for p in await store.pending(job) if p.attempt == 0]
    assert (queued.expected_at, queued.repeat_count, queued.kind) == (T0 + M, 2, "scheduled")
    clock.set(T0 + 2 * M)
    assert await scheduler.drain() == 0  # T0+2m: one waits already, so this one is skipped
    clock.set(T0 + 150 * S)
    assert await scheduler.drain() == 2  # the retry ends, then the buffered one runs

    history = await store.history(job)
    statuses = [(h.status, h.repeat_count, h.retry_count) for h in history]
    assert statuses == [
        ("Completed", 2, 0),
        ("Completed", 1, 1),
        ("Skipped", 3, 0),
        ("Failed", 1, 0),
    ]
    assert history[0].expected_execution_time == T0 + M
    assert history[0].start_time == T0 + 150 * S
    assert "another one already waits for it" in history[2].message
    assert await store.pending(job) == []
    row = await store.job(job)
    assert (row.next_execution_at, row.execution_count, row.failure_count) == (T0 + 3 * M, 3, 1)


async def test_missed_run_all_runs_each_missed_execution_in_the_window_oldest_first(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    url = sink.to("/all")
    definition = minutely(url, "00:00:30", missed="RunAll", catchUpWindow="00:05:00")
    job = await store.add("all", definition)
    clock.set(T0 + 10 * M)  # down for ten minutes: T0 … T0+10m are due
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 6  # T0+5m … T0+10m, one after the other

    history = list(reversed(await store.history(job)))  # oldest first
    postponed = [h for h in history if h.status == "Postponed"]
    ran = [h for h in history if h.status == "Completed"]
    assert [h.expected_execution_time for h in postponed] == [T0 + i * M for i in range(5)]
    assert "older than the job's executionPolicy.catchUpWindow" in postponed[0].message
    assert [h.expected_execution_time for h in ran] == [T0 + i * M for i in range(5, 11)]
    assert [h.repeat_count for h in ran] == list(range(6, 12))
    tags = [hit.headers["x-ms-execution-tag"] for hit in sink.on("/all")]
    assert tags == [h.execution_tag for h in ran] and len(set(tags)) == 6
    row = await store.job(job)
    assert (row.next_execution_at, row.next_repeat, row.execution_count) == (T0 + 11 * M, 12, 6)


async def test_missed_skip_postpones_every_missed_execution_and_runs_none(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add("none", minutely(sink.to("/none"), "00:00:30", missed="Skip"))
    clock.set(T0 + 10 * M)
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 0

    history = await store.history(job)
    assert [h.status for h in history] == ["Postponed"] * 11
    assert "executionPolicy.missed is Skip" in history[0].message
    assert sink.on("/none") == []
    row = await store.job(job)
    assert (row.next_execution_at, row.next_repeat, row.state) == (T0 + 11 * M, 12, "Enabled")


async def test_missed_skip_of_the_last_executions_completes_the_job(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    definition = minutely(sink.to("/end"), "00:00:30", missed="Skip")
    definition["recurrence"]["count"] = 3
    job = await store.add("end", definition)
    clock.set(T0 + 10 * M)
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 0

    assert [h.repeat_count for h in await store.history(job)] == [3, 2, 1]
    row = await store.job(job)
    assert (row.state, row.next_execution_at, row.ended_at) == ("Completed", None, T0 + 10 * M)


async def _backfill(store: Store, job_id: int, instants: list[Any]) -> None:
    row = await store.job(job_id)
    async with store.db.begin() as conn:
        await run_requests.request_backfill(
            conn, job_id, row.version, row.schedule_set_at, instants, T0
        )


async def test_backfill_executions_of_a_skip_job_run_one_at_a_time_oldest_first(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    sink.delay = 0.2
    definition = minutely(sink.to("/serial"), "00:00:30", overlap="Skip")
    definition["startTime"] = (T0 + 5 * M).isoformat()
    job = await store.add("serial", definition)
    past = [T0 - 3 * M, T0 - 2 * M, T0 - M]
    await _backfill(store, job, past)  # oldest first, as the API queues them
    clock.advance(seconds=1)  # every one is due
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 3

    assert sink.most_answering == 1
    history = list(reversed(await store.history(job)))
    assert [h.expected_execution_time for h in history] == past
    assert all(h.message.startswith("Backfill: ") and h.repeat_count == 0 for h in history)
    assert len({h.execution_tag for h in history}) == 3
    assert await store.pending(job) == []
    row = await store.job(job)
    assert (row.execution_count, row.next_execution_at, row.state) == (3, T0 + 5 * M, "Enabled")


async def test_backfill_executions_of_an_allow_job_run_together(
    store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    sink.delay = 0.2
    definition = minutely(sink.to("/together"), "00:00:30")
    definition["startTime"] = (T0 + 5 * M).isoformat()
    job = await store.add("together", definition)
    await _backfill(store, job, [T0 - 3 * M, T0 - 2 * M, T0 - M])
    clock.advance(seconds=1)  # every one is due
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 3
    assert sink.most_answering == 3
