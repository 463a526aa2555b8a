"""Job history on PostgreSQL is partitioned by day of `end_time` (`store.runs.partitions`): the
cleanup makes the days' partitions ahead, an entry written before its day had one moves into it,
retention drops whole days once all of a day is older than 60 days, a job's history reads the
same across partitions, and migration 0014 turns an existing table into a partition keeping
every row and id (and its downgrade turns it back)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from alembic import command
from sqlalchemy import insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.cleanup import clean_once
from horarium.store.core.db import alembic_config, create_engine, migrate
from horarium.store.core.schema import job_history
from horarium.store.resources import history
from horarium.store.runs.partitions import AHEAD, partitions, prepare_partitions
from horarium.store.runs.retention import trim_history
from tests.engine.engine_support import T0, FakeClock, Store, http
from tests.migrated_databases import migrated_pg_database
from tests.support import captured, fresh_pg_database, plan_of

pytestmark = pytest.mark.postgres

DAY = timedelta(days=1)


@pytest.fixture
async def db() -> AsyncIterator[AsyncEngine]:
    with migrated_pg_database() as url:
        engine = create_engine(url)
        try:
            yield engine
        finally:
            await engine.dispose()


def _entry(
    job_id: int, ended: datetime | None, n: int, status: str = "Completed"
) -> dict[str, Any]:
    return {
        "job_id": job_id,
        "action_name": "MainAction",
        "status": status,
        "repeat_count": n,
        "start_time": ended,
        "end_time": ended,
        "message": f"entry {n}",
    }


async def _write(db: AsyncEngine, rows: list[dict[str, Any]]) -> None:
    async with db.begin() as conn:
        await conn.execute(insert(job_history), rows)


async def _where(db: AsyncEngine) -> dict[int, str]:
    """Each entry's id and the partition that holds it."""
    query = text("SELECT id, tableoid::regclass::text FROM job_history")
    async with db.connect() as conn:
        return {row[0]: row[1] for row in await conn.execute(query)}


async def _names(db: AsyncEngine) -> list[str]:
    async with db.connect() as conn:
        found = await partitions(conn)
    assert found is not None
    return [p.name for p in found]


async def test_the_cleanup_makes_the_days_partitions_ahead(db: AsyncEngine) -> None:
    assert await prepare_partitions(db, T0) == AHEAD + 1
    assert await prepare_partitions(db, T0 + timedelta(hours=1)) == 0  # made once
    assert await _names(db) == [
        "job_history_p20300107",
        "job_history_p20300108",
        "job_history_p20300109",
        "job_history_default",
    ]
    assert await prepare_partitions(db, T0 + DAY) == 1  # one more day ahead
    async with db.connect() as conn:
        indexes = await conn.execute(
            text("SELECT indexname FROM pg_indexes WHERE tablename = 'job_history_p20300110'")
        )
        assert sorted(indexes.scalars()) == [
            "ix_job_history_end_time_p20300110",
            "ix_job_history_job_id_id_p20300110",
            "ix_job_history_job_id_status_id_p20300110",
            "pk_job_history_p20300110",
        ]
        # end_time: a BRIN (rows come in end_time order; no index entry per row written).
        method = await conn.execute(
            text(
                "SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam"
                " WHERE c.relname = 'ix_job_history_end_time_p20300110'"
            )
        )
        assert method.scalar() == "brin"


async def test_nodes_making_partitions_at_once_make_each_once(db: AsyncEngine) -> None:
    """Any node of a cluster runs the cleanup: the partitions' advisory lock lets one make them,
    the others find them made (or the lock held) and make nothing, without an error."""
    other = create_engine(str(db.url.render_as_string(hide_password=False)))
    try:
        made = await asyncio.gather(*(prepare_partitions(e, T0) for e in (db, other, db)))
    finally:
        await other.dispose()
    assert sum(made) <= AHEAD + 1
    await prepare_partitions(db, T0)  # whatever a node left for later
    assert len(await _names(db)) == AHEAD + 2


async def test_entries_written_before_their_day_had_a_partition_move_into_it(
    db: AsyncEngine,
) -> None:
    store = Store(db)
    job = await store.add("early", {"action": http("http://127.0.0.1:9/")})
    await _write(db, [_entry(job, T0, 1), _entry(job, T0 + DAY, 2), _entry(job, None, 3)])
    before = await _where(db)
    assert set(before.values()) == {"job_history_default"}  # no partition of those days yet
    await prepare_partitions(db, T0)
    after = await _where(db)
    assert sorted(after) == sorted(before)  # every entry, its id kept
    assert sorted(after.values()) == [
        "job_history_default",  # no end_time: stays there
        "job_history_p20300107",
        "job_history_p20300108",
    ]


async def test_retention_drops_whole_days_once_all_of_a_day_is_older_than_sixty_days(
    db: AsyncEngine,
) -> None:
    store = Store(db)
    job = await store.add("daily", {"action": http("http://127.0.0.1:9/")})
    start = T0.replace(hour=0)
    await prepare_partitions(db, start)
    # Entries every six hours over the three days that have partitions.
    times = [start + timedelta(hours=6 * k) for k in range(12)]
    await _write(db, [_entry(job, at, k) for k, at in enumerate(times)])
    await _write(db, [_entry(job, start - DAY, 99)])  # a day without a partition: the default

    clock = FakeClock(start + timedelta(days=60, hours=12))  # the first day half out of the window
    counts = await clean_once(db, clock)
    assert counts["partitionsDropped"] == 0 and counts["aged"] == 1  # the default's entry
    assert len(await store.history(job)) == 12  # the straddled day is kept whole

    clock = FakeClock(start + timedelta(days=61))  # the first day wholly out of the window
    counts = await clean_once(db, clock)
    assert counts["partitionsDropped"] == 1 and counts["aged"] == 0
    kept = await store.history(job)
    assert [e.repeat_count for e in kept] == list(range(11, 3, -1))
    assert "job_history_p20300107" not in await _names(db)


async def test_a_jobs_history_pages_the_same_across_partitions(db: AsyncEngine) -> None:
    store = Store(db)
    job = await store.add("paged", {"action": http("http://127.0.0.1:9/")})
    other = await store.add("other", {"action": http("http://127.0.0.1:9/")})
    await prepare_partitions(db, T0)
    rows = []
    for k in range(40):  # ids grow while end_time goes back and forth across the days
        ended = T0 + timedelta(hours=(k * 37) % 72)
        rows.append(_entry(job, ended, k, "Failed" if k % 3 == 0 else "Completed"))
        rows.append(_entry(other, ended, k))
    rows.append(_entry(job, T0 - DAY, 40))  # in the default partition
    await _write(db, rows)
    async with db.begin() as conn:  # another job's entries every 10 s of the three days
        await conn.execute(
            text(
                "INSERT INTO job_history (job_id, action_name, status, start_time, end_time)"
                " SELECT :job, 'MainAction', 'Completed', t, t FROM generate_series("
                " CAST(:start AS timestamptz), CAST(:end AS timestamptz), interval '10 s') t"
            ),
            {"job": other, "start": T0, "end": T0 + timedelta(hours=62)},
        )
    assert len(set((await _where(db)).values())) == 4
    async with db.connect() as conn:
        await conn.execute(text("ANALYZE job_history"))
        every = await history.page(conn, job, status=None, limit=100, offset=0)
        assert [e.repeat_count for e in every] == list(range(40, -1, -1))  # newest first by id
        pages = [
            await history.page(conn, job, status=None, limit=7, offset=skip)
            for skip in range(0, 42, 7)
        ]
        assert [e.row_id for page in pages for e in page] == [e.row_id for e in every]
        failed = await history.page(conn, job, status="Failed", limit=5, offset=5)
        assert [e.repeat_count for e in failed] == [24, 21, 18, 15, 12]
        plan = "\n".join(
            row[0]
            for row in await conn.execute(
                text(
                    "EXPLAIN SELECT id FROM job_history WHERE job_id = :job"
                    " ORDER BY id DESC LIMIT 10 OFFSET 10"
                ),
                {"job": job},
            )
        )
    # One ordered merge of each partition's (job_id, id) index: no sort, no table scan.
    assert "Merge Append" in plan and "Sort" not in plan.replace("Sort Key", ""), plan
    assert "Seq Scan" not in plan and plan.count("ix_job_history_job_id_id_") == 4, plan


async def test_the_trim_reads_a_jobs_entries_by_index_in_every_partition(db: AsyncEngine) -> None:
    """Trimming a job to its newest entries deletes them by (job_id, id): an id alone does not
    tell which partition holds it, and a join on ids would read every partition whole."""
    store = Store(db)
    busy = await store.add("busy", {"action": http("http://127.0.0.1:9/")})
    other = await store.add("other", {"action": http("http://127.0.0.1:9/")})
    await prepare_partitions(db, T0)
    ended = [T0 + timedelta(minutes=k * 3) for k in range(1200)]  # two and a half days
    await _write(db, [_entry(busy, at, k) for k, at in enumerate(ended)])
    await _write(db, [_entry(other, at, k) for k, at in enumerate(ended * 10)])
    async with db.begin() as conn:
        await conn.execute(text("ANALYZE job_history"))
    with captured(db) as seen:
        assert await trim_history(db, 1000) == 200 + 11000  # the other's kept its newest 1,000
    kept = await store.history(busy)
    assert [e.repeat_count for e in kept] == list(range(1199, 199, -1))
    trims = [s for s in seen if s[0].lstrip().upper().startswith("DELETE")]
    assert trims
    plan = await plan_of(db, trims[0])
    assert "Seq Scan on job_history_p" not in plan, plan  # the default partition is empty


async def _to(engine: AsyncEngine, revision: str, way: str = "upgrade") -> None:
    async with engine.begin() as conn:
        await conn.run_sync(lambda c: getattr(command, way)(alembic_config(c), revision))
    await engine.dispose()  # as `migrate` does: no statement prepared on the types before


@asynccontextmanager
async def database_at(revision: str) -> AsyncIterator[AsyncEngine]:
    """An engine on a fresh PostgreSQL database migrated up to `revision`; disposed after."""
    with fresh_pg_database() as url:
        db = create_engine(url)
        try:
            await _to(db, revision)
            yield db
        finally:
            await db.dispose()


async def test_migration_attaches_the_existing_table_keeping_every_row_and_id() -> None:
    async with database_at("0012") as db:
        store = Store(db)
        job = await store.add("old", {"action": http("http://127.0.0.1:9/")})
        now = datetime.now(UTC)
        ended = [now - timedelta(days=d, hours=1) for d in (59, 30, 2, 0)]
        await _write(db, [_entry(job, at, k) for k, at in enumerate(ended)])
        await _write(db, [_entry(job, None, 9)])
        async with db.connect() as conn:
            old = {r.id: r for r in await conn.execute(select(job_history))}

        await migrate(db)
        tomorrow = (now + DAY).strftime("%Y%m%d")
        assert await _names(db) == [f"job_history_before_{tomorrow}", "job_history_default"]
        where = await _where(db)
        assert sorted(where) == sorted(old)
        assert where[max(old)] == "job_history_default"  # the entry without end_time
        async with db.connect() as conn:
            now_rows = {r.id: r for r in await conn.execute(select(job_history))}
            indexes = await conn.execute(
                text("SELECT count(*) FROM pg_indexes WHERE tablename LIKE 'job_history_b%'")
            )
            # Its own four, adopted (its btree on end_time keeps serving its row-by-row
            # ageing), and the partitions' BRIN on end_time, built by the attachment.
            assert indexes.scalar() == 5
        assert now_rows == old
        await _write(db, [_entry(job, now, 10)])
        assert max(await _where(db)) == max(old) + 1  # the same id sequence
        await prepare_partitions(db, now)  # today is the old table's: from tomorrow
        assert await _names(db) == [
            f"job_history_before_{tomorrow}",
            *(f"job_history_p{(now + DAY * d).strftime('%Y%m%d')}" for d in range(1, AHEAD + 1)),
            "job_history_default",
        ]

        await _to(db, "0012", "downgrade")
        async with db.connect() as conn:
            plain = {r.id: r for r in await conn.execute(select(job_history))}
            kind = await conn.execute(
                text("SELECT relkind::text FROM pg_class WHERE relname = 'job_history'")
            )
            assert kind.scalar() == "r"
        assert sorted(plain) == [*sorted(old), max(old) + 1]
        await migrate(db)  # and up again
        assert sorted(await _where(db)) == sorted(plain)
