"""The tables that gain a row per execution or event (`job_history`, `job_executions`,
`notifications`, `monitor_check_ins`) take ids past 2^31: the engine records history, keeps a
pending retry, queues and delivers a notification, a check-in is recorded, and the trims keep
the big ids in their marks and still delete the right entries; on SQLite (INTEGER, the 64-bit
rowid) as on PostgreSQL (`bigint` since migration 0015). Migration 0015 keeps every row of an
existing database, partitions included, and its downgrade refuses ids past 2^31."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.schema import CreateTable

from horarium.api.ping_ops import CheckIn, record
from horarium.engine.notifying import Notifier
from horarium.engine.scheduler import Scheduler
from horarium.model.monitor import CheckInKind
from horarium.store.core.db import migrate
from horarium.store.core.schema import (
    engine_marks,
    job_executions,
    job_history,
    monitor_check_ins,
    notifications,
)
from horarium.store.resources import collections as collections_store
from horarium.store.runs.partitions import prepare_partitions
from horarium.store.runs.retention import CHECK_INS, HISTORY, trim_history
from tests.engine.engine_support import T0, FakeClock, Sink, Store, engine_settings, http
from tests.engine.test_history_partitions import _entry, _to, _where, _write, database_at
from tests.engine.test_retention import _check_ins, _monitor

BIG = 2**31 + 1000  # past the largest int4
GROWING = (job_history, job_executions, notifications, monitor_check_ins)
FAR = T0 + timedelta(days=3650)  # a placeholder row's due time: never taken in a test


async def _ids_past_int4(db: AsyncEngine, store: Store) -> None:
    """The next id of every growing table is past 2^31: PostgreSQL's sequences are set there;
    SQLite's next rowid follows the largest, so each table gets a row at BIG that nothing in
    the test takes (another job's, another monitor's, a notification due in ten years)."""
    async with db.begin() as conn:
        if conn.dialect.name == "postgresql":
            for table in GROWING:
                await conn.execute(
                    text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), {BIG})")
                )
            return
    aside = await store.add("aside", {"action": http("http://127.0.0.1:9/"), "state": "Disabled"})
    monitor = await _monitor(db, store, "aside")
    async with db.begin() as conn:
        await conn.execute(insert(job_history), [{"id": BIG, **_entry(aside, T0, 0)}])
        await conn.execute(
            insert(job_executions).values(
                id=BIG,
                job_id=aside,
                execution_tag="aside",
                kind="once",
                repeat_count=1,
                expected_at=FAR,
                job_version=1,
                phase="main",
                due_at=FAR,
                created_at=T0,
            )
        )
        await conn.execute(
            insert(notifications).values(
                id=BIG, collection_id=0, event="aside", body="{}", created_at=T0, due_at=FAR
            )
        )
        await conn.execute(
            insert(monitor_check_ins).values(
                id=BIG, monitor_id=monitor, kind="Success", received_at=T0, body=""
            )
        )


async def _ids(conn: AsyncConnection, table: Any, **where: Any) -> list[int]:
    query = select(table.c.id).order_by(table.c.id)
    for column, value in where.items():
        query = query.where(table.c[column] == value)
    return list((await conn.execute(query)).scalars())


async def _mark(db: AsyncEngine, name: str) -> int:
    async with db.connect() as conn:
        found = await conn.execute(select(engine_marks.c.value).where(engine_marks.c.name == name))
        return int(found.scalar_one())


async def test_ids_past_32_bits_are_recorded_delivered_and_trimmed(
    db: AsyncEngine, store: Store, sink: Sink, clock: FakeClock, make_scheduler: Any
) -> None:
    await _ids_past_int4(db, store)
    collection = await store.collection()
    hook = {"events": ["ExecutionFaulted"], "uri": sink.to("/notify"), "secret": "whsec-big-ids"}
    async with db.begin() as conn:
        await collections_store.update_one(conn, collection, T0, document={"notifications": [hook]})
    done = await store.add("done", {"action": http(sink.to("/ok"))})
    broken = await store.add(
        "broken", {"action": http(sink.plan("/bad", 500), retryPolicy={"retryType": "None"})}
    )
    retried = await store.add("retried", {"action": http(sink.plan("/again", 500, 200))})
    scheduler: Scheduler = make_scheduler()
    await scheduler.drain()

    async with db.connect() as conn:
        written = await _ids(conn, job_history, job_id=done) + await _ids(
            conn, job_history, job_id=broken
        )
        waiting = await _ids(conn, job_executions, job_id=retried)  # its retry, 30 s later
        queued = await _ids(conn, notifications, event="ExecutionFaulted")
    assert len(written) == 2 and min(written) > BIG
    assert len(waiting) == 1 and waiting[0] > BIG
    assert len(queued) == 1 and queued[0] > BIG

    notifier = Notifier(db, clock, engine_settings())
    delivering = asyncio.create_task(notifier.run_forever())
    try:
        await sink.wait_hits(4)  # /ok, /bad, /again and the notification
        for _ in range(200):  # until it is settled (at most 10 s)
            if queued[0] not in await _queued(db):
                break
            await asyncio.sleep(0.05)
    finally:
        delivering.cancel()
    assert len(sink.on("/notify")) == 1
    assert queued[0] not in await _queued(db)

    monitor = await _monitor(db, store, "pinged")
    ping = CheckIn("pinged".ljust(64, "0"), CheckInKind.SUCCESS, None, "ok", T0)
    async with db.begin() as conn:
        await conn.run_sync(lambda sync: record(sync, ping, None))
        [check_in] = await _ids(conn, monitor_check_ins, monitor_id=monitor)
    assert check_in > BIG

    await _write(db, [_entry(done, T0, n) for n in range(3)])
    async with db.connect() as conn:
        history = await _ids(conn, job_history, job_id=done)
    assert await trim_history(db, 2) == 2  # `done` had 4 entries: its 2 oldest go
    async with db.connect() as conn:
        assert await _ids(conn, job_history, job_id=done) == history[-2:]
        newest = max(await _ids(conn, job_history))
    assert await _mark(db, HISTORY.mark) == newest > BIG

    await _check_ins(db, monitor, 2, T0)
    assert await trim_history(db, 1, CHECK_INS) == 2
    async with db.connect() as conn:
        [kept] = await _ids(conn, monitor_check_ins, monitor_id=monitor)
    assert await _mark(db, CHECK_INS.mark) == kept > check_in


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
async def test_sqlite_keeps_its_rowid_ids(db: AsyncEngine) -> None:
    """On SQLite each growing table's id is still `INTEGER PRIMARY KEY`, the rowid itself (no
    AUTOINCREMENT: the next id follows the largest), as the schema compiles it and as the
    migrations made it."""
    for table in GROWING:
        ddl = str(CreateTable(table).compile(dialect=sqlite.dialect()))
        assert "\tid INTEGER NOT NULL" in ddl and "PRIMARY KEY (id)" in ddl, ddl
        assert "AUTOINCREMENT" not in ddl
    async with db.connect() as conn:
        for table in GROWING:
            info = await conn.exec_driver_sql(f"PRAGMA table_info({table.name})")
            assert [(r.type, r.pk) for r in info if r.name == "id"] == [("INTEGER", 1)]
            rowid = await conn.exec_driver_sql(
                f"SELECT count(*) FROM {table.name} WHERE id IS NOT rowid"
            )
            assert rowid.scalar() == 0
        made = await conn.exec_driver_sql(
            "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'"
        )
        assert made.scalar() == 0


async def _queued(db: AsyncEngine) -> list[int]:
    async with db.connect() as conn:
        return await _ids(conn, notifications)


async def _rows(engine: AsyncEngine) -> dict[str, set[tuple[Any, ...]]]:
    async with engine.connect() as conn:
        return {
            table.name: {tuple(row) for row in await conn.execute(select(table))}
            for table in GROWING
        }


async def _catalog(engine: AsyncEngine) -> Mapping[str, Any]:
    """The type of each growing table's id, its partitions' included; of each sequence; and
    the indexes on those tables (valid ones only)."""
    async with engine.connect() as conn:
        types = await conn.execute(
            text(
                "SELECT c.relname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a"
                " JOIN pg_class c ON c.oid = a.attrelid WHERE a.attname = 'id'"
                " AND c.relkind IN ('r', 'p') AND (c.relname LIKE 'job_history%'"
                " OR c.relname IN ('job_executions', 'notifications', 'monitor_check_ins'))"
            )
        )
        sequences = await conn.execute(text("SELECT sequencename, data_type FROM pg_sequences"))
        indexes = await conn.execute(
            text(
                "SELECT i.indexrelid::regclass::text FROM pg_index i"
                " JOIN pg_class c ON c.oid = i.indrelid WHERE i.indisvalid"
                " AND (c.relname LIKE 'job_history%'"
                " OR c.relname IN ('job_executions', 'notifications', 'monitor_check_ins'))"
            )
        )
        return {
            "types": {name: kind for name, kind in types},
            "sequences": {name: kind for name, kind in sequences},
            "indexes": sorted(indexes.scalars()),
        }


@pytest.mark.postgres
async def test_the_upgrade_to_64_bit_ids_keeps_every_row_partitions_and_indexes() -> None:
    async with database_at("0012") as db:
        store = Store(db)
        job = await store.add("old", {"action": http("http://127.0.0.1:9/")})
        monitor = await _monitor(db, store, "old")
        now = T0.replace(hour=0)
        await _write(db, [_entry(job, now - timedelta(days=3), 1)])  # the table made before
        await _to(db, "0014")
        await prepare_partitions(db, now)
        await _write(db, [_entry(job, now + timedelta(hours=h), h) for h in (1, 30, 50)])
        await _write(db, [_entry(job, None, 9)])  # the default partition
        await _check_ins(db, monitor, 3, now)
        async with db.begin() as conn:
            await conn.execute(
                insert(notifications).values(
                    collection_id=1,
                    event="ExecutionFaulted",
                    body="{}",
                    created_at=T0,
                    due_at=FAR,
                )
            )
        rows, partitioned = await _rows(db), await _where(db)
        assert len(set(partitioned.values())) == 5  # before, 3 days, default
        before = await _catalog(db)
        assert set(before["types"].values()) == {"integer"}

        await migrate(db)
        after = await _catalog(db)
        assert set(after["types"]) == set(before["types"])
        assert set(after["types"].values()) == {"bigint"}
        for table in GROWING:
            assert after["sequences"][f"{table.name}_id_seq"] == "bigint"
        assert after["sequences"]["jobs_id_seq"] == "integer"  # jobs are not executions
        assert after["indexes"] == before["indexes"]  # rebuilt under their names
        assert await _rows(db) == rows and await _where(db) == partitioned

        await _to(db, "0014", "downgrade")  # ids within 2^31: back to integer
        assert (await _catalog(db))["types"] == before["types"]
        assert await _rows(db) == rows
        await migrate(db)

        async with db.begin() as conn:
            await conn.execute(text(f"SELECT setval('job_history_id_seq', {BIG})"))
        await _write(db, [_entry(job, now + timedelta(hours=2), 10)])
        assert max(await _where(db)) == BIG + 1
        with pytest.raises(RuntimeError, match="ids have reached"):
            await _to(db, "0014", "downgrade")
        async with db.connect() as conn:
            assert (
                await conn.execute(text("SELECT version_num FROM alembic_version"))
            ).scalar() == "0015"
