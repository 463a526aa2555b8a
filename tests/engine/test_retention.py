"""History retention (1,000 entries per job, 60 days; monitors' check-ins alike) and deletion of
jobs ended 60 days ago; and the claim queries stay on indexes, so their cost does not grow with
jobs that are not due."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.cleanup import clean_once
from horarium.engine.scheduler import Scheduler
from horarium.store.core.schema import job_history, jobs, monitor_check_ins, monitors
from tests.engine.engine_support import T0, FakeClock, Sink, Store, http
from tests.support import captured, plan_of, sqlite_table_scans


async def _add_history(db: AsyncEngine, job_id: int, n: int, ended: Any) -> None:
    async with db.begin() as conn:
        await conn.execute(
            insert(job_history),
            [
                {
                    "job_id": job_id,
                    "action_name": "MainAction",
                    "status": "Completed",
                    "repeat_count": i + 1,
                    "start_time": ended,
                    "end_time": ended,
                    "message": f"entry {i}",
                }
                for i in range(n)
            ],
        )


async def test_history_keeps_the_newest_thousand_entries_per_job(
    store: Store, db: AsyncEngine, clock: FakeClock
) -> None:
    busy = await store.add("busy", {"action": http("http://127.0.0.1:9/")})
    quiet = await store.add("quiet", {"action": http("http://127.0.0.1:9/")})
    await _add_history(db, busy, 1200, T0)
    await _add_history(db, quiet, 10, T0)
    counts = await clean_once(db, clock)
    assert counts["trimmed"] == 200
    busy_left = await store.history(busy)
    assert len(busy_left) == 1000
    assert busy_left[-1].message == "entry 200"  # the oldest 200 went
    assert len(await store.history(quiet)) == 10


async def test_history_older_than_sixty_days_is_deleted(
    store: Store, db: AsyncEngine, clock: FakeClock
) -> None:
    job = await store.add("old", {"action": http("http://127.0.0.1:9/")})
    await _add_history(db, job, 3, T0 - timedelta(days=61))
    await _add_history(db, job, 2, T0 - timedelta(days=59))
    await clean_once(db, clock)
    assert len(await store.history(job)) == 2


async def _monitor(db: AsyncEngine, store: Store, name: str) -> int:
    """A monitor row in the collection of a job made for it."""
    job = await store.add(f"of-{name}", {"action": http("http://127.0.0.1:9/")})
    async with db.begin() as conn:
        collection = (
            await conn.execute(select(jobs.c.collection_id).where(jobs.c.id == job))
        ).scalar()
        made = await conn.execute(
            insert(monitors).values(
                collection_id=collection,
                key=name,
                name=name,
                definition={"recurrence": {"frequency": "Hour"}, "grace": "00:05:00"},
                state="Enabled",
                schedule_set_at=T0,
                token_sha256=name.ljust(64, "0"),
                status="New",
                created_at=T0,
                updated_at=T0,
            )
        )
    return int(made.inserted_primary_key[0])


async def _check_ins(db: AsyncEngine, monitor: int, n: int, at: Any) -> None:
    rows = [
        {"monitor_id": monitor, "kind": "Success", "received_at": at, "body": f"check-in {i}"}
        for i in range(n)
    ]
    async with db.begin() as conn:
        await conn.execute(insert(monitor_check_ins), rows)


async def _bodies(db: AsyncEngine, monitor: int) -> list[str]:
    query = (
        select(monitor_check_ins.c.body)
        .where(monitor_check_ins.c.monitor_id == monitor)
        .order_by(monitor_check_ins.c.id.desc())
    )
    async with db.connect() as conn:
        return list((await conn.execute(query)).scalars())


async def test_check_ins_are_kept_as_history_is(
    store: Store, db: AsyncEngine, clock: FakeClock
) -> None:
    busy, old = await _monitor(db, store, "busy"), await _monitor(db, store, "old")
    await _check_ins(db, busy, 1100, T0)
    await _check_ins(db, old, 3, T0 - timedelta(days=61))
    await _check_ins(db, old, 2, T0 - timedelta(days=59))
    counts = await clean_once(db, clock)
    assert counts["checkInsTrimmed"] == 100 and counts["checkInsAged"] == 3
    kept = await _bodies(db, busy)
    assert len(kept) == 1000 and kept[-1] == "check-in 100"  # the oldest 100 went
    assert len(await _bodies(db, old)) == 2


async def test_completed_and_faulted_jobs_are_deleted_sixty_days_after_they_ended(
    store: Store, sink: Sink, db: AsyncEngine, clock: FakeClock, make_scheduler: Any
) -> None:
    done = await store.add("done", {"action": http(sink.to("/ok"))})
    broken = await store.add(
        "broken", {"action": http(sink.plan("/bad", 500), retryPolicy={"retryType": "None"})}
    )
    recurring = await store.add(
        "recurring",
        {"action": http(sink.to("/r")), "recurrence": {"frequency": "Day", "interval": 1}},
    )
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()
    assert (await store.job(done)).state == "Completed"
    assert (await store.job(broken)).state == "Faulted"

    clock.advance(days=59)
    await clean_once(db, clock)
    assert (await store.job(done)).state == "Completed"

    clock.advance(days=2)
    await clean_once(db, clock)
    async with db.connect() as conn:
        left = (await conn.execute(select(jobs.c.id))).scalars().all()
    assert left == [recurring]
    assert await store.history(done) == []


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_engine_queries_use_indexes_not_table_scans(
    db: AsyncEngine, store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    """Every statement the engine sends (claiming, recording, retention) is planned by SQLite
    as an index search: none scans a table, so idle jobs cost nothing."""
    for i in range(5):
        await store.add(f"j{i}", {"action": http(sink.plan(f"/{i}", 500, 200))})
    scheduler: Scheduler = make_scheduler()
    # The API's engine (retention writes through it) and the engine's own connection to the
    # file, on its writer thread (`horarium.store.runs.transact`).
    with captured(db, scheduler.runs.transactor.sync_engine, many=False) as seen:
        await scheduler.drain()
        clock.advance(seconds=30)
        await scheduler.drain()
        await clean_once(db, clock)
        await scheduler.runs.next_due()
    skipped = ("INSERT", "BEGIN", "PRAGMA")
    statements = [s for s in seen if not s[0].lstrip().upper().startswith(skipped)]
    assert len(statements) > 10
    for statement in statements:
        plan = await plan_of(db, statement)
        assert not sqlite_table_scans(plan.splitlines()), f"{statement[0]}: {plan}"


async def test_history_written_before_a_restart_is_still_trimmed(
    store: Store, sink: Sink, db: AsyncEngine, clock: FakeClock, make_scheduler: Any
) -> None:
    job = await store.add(
        "minutely",
        {"action": http(sink.to("/m")), "recurrence": {"frequency": "Minute", "interval": 1}},
    )
    await _add_history(db, job, 1000, T0)
    before: Scheduler = make_scheduler()
    await before.drain()  # one more entry, then the process stops before any cleanup
    await before.stop()

    after: Scheduler = make_scheduler()  # a new process knows nothing of what was written
    assert (await clean_once(after.db, clock))["trimmed"] == 1
    entries = await store.history(job)
    assert len(entries) == 1000
    assert entries[0].execution_tag is not None  # the newest, the engine's, was kept


async def test_each_pass_trims_the_jobs_written_to_since_the_last(
    store: Store, db: AsyncEngine, clock: FakeClock
) -> None:
    first = await store.add("first", {"action": http("http://127.0.0.1:9/")})
    second = await store.add("second", {"action": http("http://127.0.0.1:9/")})
    await _add_history(db, first, 1100, T0)
    assert (await clean_once(db, clock))["trimmed"] == 100
    await _add_history(db, second, 1050, T0)
    await _add_history(db, first, 3, T0)
    assert (await clean_once(db, clock))["trimmed"] == 53
    assert len(await store.history(first)) == 1000
    assert len(await store.history(second)) == 1000
    assert (await clean_once(db, clock))["trimmed"] == 0


async def test_trimming_writes_only_to_jobs_over_the_limit(
    store: Store, db: AsyncEngine, clock: FakeClock
) -> None:
    """A pass over many jobs with short histories deletes nothing of theirs, so check-ins and
    claims (which wait for the write lock) do not queue behind it job by job."""
    quiet = [await store.add(f"q{i}", {"action": http("http://127.0.0.1:9/")}) for i in range(30)]
    busy = await store.add("busy", {"action": http("http://127.0.0.1:9/")})
    for job in quiet:
        await _add_history(db, job, 5, T0)
    await _add_history(db, busy, 1010, T0)
    with captured(db) as seen:
        counts = await clean_once(db, clock)
    trims = [sql for sql, _ in seen if _trims_history(sql)]
    assert counts["trimmed"] == 10
    assert len(trims) == 1  # the busy job's; none for the 30 quiet ones
    assert len(await store.history(busy)) == 1000
    assert [len(await store.history(job)) for job in quiet] == [5] * 30


def _trims_history(sql: str) -> bool:
    """A statement that trims job_history to its limit (not one deleting by age)."""
    text = sql.lstrip().upper()
    return text.startswith("DELETE FROM JOB_HISTORY") and "END_TIME" not in text
