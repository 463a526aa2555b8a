"""How the databases run the store's hot queries: the statements are captured as the store
functions run them, then explained (EXPLAIN on PostgreSQL, EXPLAIN QUERY PLAN on SQLite)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, text
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.model.names import CollectionName
from horarium.store.core.db import migrate
from horarium.store.core.schema import job_executions, jobs, monitors
from horarium.store.resources import collections as collections_store
from horarium.store.resources import monitors as monitors_store
from horarium.store.runs import monitor_checks
from horarium.store.runs.store import Runs
from horarium.store.runs.transact import Transactor
from horarium.store.runs.vocabulary import (
    Attempt,
    Claimed,
    Decision,
    DueJob,
    ExecutionKind,
    FaultJob,
    Finish,
    Phase,
    Retry,
    RunExecution,
    StartErrorAction,
)
from tests.database_fixtures import db_url as db_url
from tests.database_fixtures import migrated
from tests.support import (
    Statement,
    captured,
    fresh_pg_database,
    plan_of,
    sqlite_table_scans,
)

NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_pg_database() as url:
        yield url


def first_select(seen: list[Statement], where: Callable[[str], bool]) -> Statement:
    return next(s for s in seen if s[0].lstrip().upper().startswith("SELECT") and where(s[0]))


async def store_collections(db: AsyncEngine, subscriptions: int, per_subscription: int) -> None:
    async with db.begin() as conn:
        for s in range(subscriptions):
            for c in range(per_subscription):
                await collections_store.insert_one(
                    conn,
                    CollectionName(f"Sub-{s}", f"RG-{c % 3}", f"c{c}"),
                    location="West US",
                    state="Enabled",
                    sku="Standard",
                    document={},
                    now=NOW,
                )


async def test_listing_a_subscriptions_collections_reads_them_by_index(db_url: str) -> None:
    async with migrated(db_url) as db:
        await store_collections(db, subscriptions=200, per_subscription=10)
        if db.dialect.name == "postgresql":
            async with db.begin() as conn:
                await conn.execute(text("ANALYZE job_collections"))
        with captured(db) as seen:
            async with db.connect() as conn:
                listed = await collections_store.list_all(conn, "SUB-7")
                in_group = await collections_store.list_all(conn, "sub-7", "rg-1")
        assert len(listed) == 10
        assert {c.resource_group for c in in_group} == {"RG-1"}
        for statement in seen:
            plan = await plan_of(db, statement)
            assert "ix_job_collections_lower_subscription_id" in plan, plan


async def store_jobs(db: AsyncEngine, collections: int, per_collection: int, due: int) -> None:
    """Recurring jobs spread over `collections` collections: `due` of them due at NOW, the
    others within the next week."""
    await store_collections(db, subscriptions=1, per_subscription=collections)
    action = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/x", "method": "GET"}}
    pick = random.Random(15)
    rows = []
    for i in range(collections * per_collection):
        later = timedelta(seconds=pick.randint(60, 7 * 86400))
        rows.append(
            {
                "collection_id": 1 + i % collections,
                "key": f"job{i}",
                "name": f"job{i}",
                "definition": {
                    "action": action,
                    "recurrence": {"frequency": "Hour", "interval": 1},
                },
                "state": "Enabled",
                "schedule_set_at": NOW - timedelta(days=1),
                "created_at": NOW,
                "updated_at": NOW,
                "next_execution_at": NOW - timedelta(seconds=i % 50) if i < due else NOW + later,
            }
        )
    async with db.begin() as conn:
        for start in range(0, len(rows), 2000):
            await conn.execute(insert(jobs), rows[start : start + 2000])


@pytest.mark.postgres
async def test_after_a_restart_postgres_claims_due_jobs_in_index_order(pg_url: str) -> None:
    """A database filled while nothing analyzed it (autovacuum off or behind): once the
    process starts again (migrations run), claiming reads the due jobs in `next_execution_at`
    order and stops at the batch, rather than reading every job of every collection and
    sorting every due one."""
    async with migrated(pg_url) as db:
        async with db.begin() as conn:
            for table in ("jobs", "job_collections"):
                await conn.execute(text(f"ALTER TABLE {table} SET (autovacuum_enabled = false)"))
        await store_jobs(db, collections=50, per_collection=400, due=1000)
        await migrate(db)  # what `serve` and `worker` do at start

        def refuse(due: DueJob) -> Decision:
            return FaultJob(due, "the test only looks at the claim's query")

        runs = Runs(db, "test:1:plans")
        with captured(db) as seen:
            await runs.claim(NOW, 200, lambda: NOW + timedelta(minutes=5), refuse)
        await runs.close()
        plan = await plan_of(db, first_select(seen, lambda sql: "next_execution_at" in sql))
        assert "Index Scan using ix_jobs_next_execution_at on jobs" in plan, plan
        assert "Bitmap Heap Scan on jobs" not in plan, plan

        analyzed = await analyze_count(db, "jobs")
        await migrate(db)  # a restart with current statistics analyzes nothing
        assert await analyze_count(db, "jobs") == analyzed


async def analyze_count(db: AsyncEngine, table: str) -> int:
    async with db.connect() as conn:
        found = await conn.execute(
            text("SELECT analyze_count FROM pg_stat_user_tables WHERE relname = :t"), {"t": table}
        )
        return int(found.scalar_one())


@pytest.mark.postgres
async def test_postgres_without_statistics_claims_without_walking_every_collection(
    pg_url: str,
) -> None:
    """A database filled and never analyzed, the process not restarted (so no ANALYZE ran):
    the claim does not walk each collection's jobs through their index, the plan that read
    every stored job collection by collection (37 ms per claim against 0.9 ms). Without any
    statistics PostgreSQL may still scan `jobs` once; the ANALYZE at start gives it the
    index-ordered plan (the test above)."""
    async with migrated(pg_url) as db:
        async with db.begin() as conn:
            for table in ("jobs", "job_collections"):
                await conn.execute(text(f"ALTER TABLE {table} SET (autovacuum_enabled = false)"))
        await store_jobs(db, collections=50, per_collection=400, due=1000)

        def refuse(due: DueJob) -> Decision:
            return FaultJob(due, "the test only looks at the claim's query")

        runs = Runs(db, "test:1:plans")
        with captured(db) as seen:
            await runs.claim(NOW, 200, lambda: NOW + timedelta(minutes=5), refuse)
        await runs.close()
        plan = await plan_of(db, first_select(seen, lambda sql: "next_execution_at" in sql))
        assert "ix_jobs_collection_id_key" not in plan, plan


async def test_a_collections_recent_outcomes_read_each_jobs_newest_entries_by_index(
    db_url: str,
) -> None:
    """The dashboard's jobs list (`…/outcomes`): each job's newest entries come from the
    (job_id, id) index, never a scan of the whole history (a minute job keeps 86,400 rows
    over the 60 days of retention)."""
    from horarium.store.core.schema import job_history
    from horarium.store.resources import history

    async with migrated(db_url) as db:
        await store_jobs(db, collections=2, per_collection=50, due=0)
        entry = {"action_name": "MainAction", "status": "Completed", "retry_count": 0}
        times = {"expected_execution_time": NOW, "start_time": NOW, "end_time": NOW}
        rows = [
            {**entry, **times, "job_id": 1 + k % 100, "repeat_count": k, "message": str(k)}
            for k in range(6000)
        ]
        async with db.begin() as conn:
            await conn.execute(insert(job_history), rows)
            if db.dialect.name == "postgresql":
                await conn.execute(text("ANALYZE"))
        with captured(db) as seen:
            async with db.connect() as conn:
                found = await history.latest_per_job(conn, 1, 10)
        assert len(found) == 50 and all(len(job.entries) == 10 for job in found)
        first = next(job for job in found if job.job == "job0")
        # job0 holds every hundredth row: its newest ten, newest first.
        assert [e.message for e in first.entries] == [str(k) for k in range(5900, 4999, -100)]
        plan = await plan_of(db, first_select(seen, lambda sql: "job_history" in sql))
        assert "ix_job_history_job_id_id" in plan, plan
        if db.dialect.name == "sqlite":  # a range of the index per job, from its tenth newest
            assert "(job_id=? AND id>?)" in plan, plan
        else:  # ten index steps per job
            assert "Limit" in plan and "Seq Scan on job_history" not in plan, plan


async def park_executions(db: AsyncEngine, count: int) -> None:
    """`count` job_executions rows of the jobs not due, due in ten years: a table of some size
    that the test's claims never take."""
    async with db.connect() as conn:
        idle = (await conn.execute(text("SELECT id FROM jobs ORDER BY id DESC"))).scalars().all()
    far = NOW + timedelta(days=3650)
    rows = [
        {
            "job_id": idle[i % len(idle)],
            "execution_tag": f"parked{i}",
            "kind": ExecutionKind.RUN_NOW,
            "repeat_count": 0,
            "expected_at": far,
            "job_version": 1,
            "phase": Phase.MAIN,
            "attempt": 0,
            "due_at": far,
            "created_at": NOW,
        }
        for i in range(count)
    ]
    async with db.begin() as conn:
        await conn.execute(insert(job_executions), rows)


ID_LISTS = re.compile(r"json_each\(|= ANY \(")


def each_step(claimed: list[Claimed], at: datetime) -> list[Attempt]:
    """Every attempt failed: a retry, the error action, or the end, in turn."""
    steps = (Retry(1, timedelta(seconds=30)), StartErrorAction(), Finish(faulted=True))
    return [
        Attempt(c, at, at, succeeded=False, message="no", step=steps[i % 3])
        for i, c in enumerate(claimed)
    ]


async def test_the_engines_id_list_statements_find_their_rows_by_key(db_url: str) -> None:
    """The statements that take a list of ids as one parameter (`store.runs.id_lists`: the
    leases of a claim, a renewal and a takeover, a record's locks and writes) find their rows
    through the primary key or an index on both databases; none reads a whole table."""

    def run(due: DueJob) -> Decision:
        later = due.next_execution_at + timedelta(hours=1)
        return RunExecution(
            due, ExecutionKind.SCHEDULED, due.next_repeat, due.next_execution_at, later, 1
        )

    async with migrated(db_url) as db:
        await store_jobs(db, collections=10, per_collection=500, due=60)
        await park_executions(db, 5000)
        if db.dialect.name == "postgresql":
            async with db.begin() as conn:
                await conn.execute(text("ANALYZE"))
        runs = Runs(db, "test:1:plans")
        lease = timedelta(minutes=5)
        with captured(db, runs.transactor.sync_engine) as seen:
            first = await runs.claim(NOW, 60, lambda: NOW + lease, run)
            await runs.renew(first, lambda: NOW + lease)
            assert await runs.record(each_step(first, NOW), NOW)
            later = NOW + timedelta(minutes=1)
            # the retries and error actions
            again = await runs.claim(later, 60, lambda: later + lease, run)
            assert again and all(c.run_id is not None for c in again)
            await runs.renew(again, lambda: later + lease)
            assert await runs.expire_gone_leases(later, lambda owner: True) == len(again)
            again = await runs.claim(later, 60, lambda: later + lease, run)
            assert await runs.record(each_step(again, later), later)
        await runs.close()
        lists = {sql: (sql, params) for sql, params in seen if ID_LISTS.search(sql)}
        assert len(lists) >= 12, "\n".join(lists)
        for statement in lists.values():
            plan = await plan_of(db, statement)
            if db.dialect.name == "sqlite":
                assert not sqlite_table_scans(plan.splitlines()), plan
                assert re.search(r"^SEARCH (jobs|job_executions) USING", plan, re.M), plan
            else:
                assert not re.search(r"Seq Scan on (jobs|job_executions)\b", plan), plan
                assert re.search(r"Index (Only )?Scan\b.* on (jobs|job_executions)", plan), plan


async def store_monitors(db: AsyncEngine, count: int, due: int) -> None:
    """`count` monitors over 10 collections: `due` of them due at NOW, the others later."""
    await store_collections(db, subscriptions=1, per_subscription=10)
    rows = [
        {
            "collection_id": 1 + i % 10,
            "key": f"m{i}",
            "name": f"m{i}",
            "definition": {"recurrence": {"frequency": "Hour"}, "grace": "00:05:00"},
            "state": "Enabled",
            "schedule_set_at": NOW - timedelta(days=1),
            "token_sha256": f"{i:064x}",
            "status": "Up",
            "expected_at": NOW + timedelta(minutes=i % 60),
            "due_at": NOW - timedelta(seconds=1)
            if i < due
            else NOW + timedelta(minutes=1 + i % 60),
            "created_at": NOW,
            "updated_at": NOW,
        }
        for i in range(count)
    ]
    async with db.begin() as conn:
        await conn.execute(insert(monitors), rows)
        if db.dialect.name == "postgresql":
            await conn.execute(text("ANALYZE monitors"))


async def test_monitor_checks_and_check_ins_read_monitors_by_index(db_url: str) -> None:
    """The engine's look for due monitors and a check-in's token lookup stay on indexes: their
    cost does not grow with monitors that are not due."""
    async with migrated(db_url) as db:
        await store_monitors(db, count=3000, due=20)
        transactor = Transactor(db)
        with captured(db, transactor.sync_engine) as seen:
            assert await monitor_checks.next_due(db) is not None
            judged = await monitor_checks.judge_due(transactor, NOW)
            async with db.begin() as conn:
                found = await monitors_store.by_token(conn, f"{7:064x}")
        await transactor.close()
        assert judged.looked == 20 and found is not None and found.monitor.name == "m7"
        reads = [s for s in seen if s[0].lstrip().upper().startswith("SELECT")]
        assert len(reads) == 3
        for statement in reads:
            plan = await plan_of(db, statement)
            assert "SCAN monitors" not in plan and "Seq Scan on monitors" not in plan, plan
            assert "due_at" in plan or "token_sha256" in plan, plan
