"""The lock order on PostgreSQL, checked on the statements the engine sends (docs/engine.md,
"Lock order"): every statement that locks rows either skips rows others hold (and so never
waits) or takes them in id order; every update or delete of job or job_executions rows works on
rows its transaction locked before, in that order; and no transaction waits for a job row
after it has locked a job_executions row. Together: no two engine transactions can wait for
each other in a cycle."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.engine.cleanup import clean_once
from horarium.engine.deciding import Decider
from horarium.engine.nodes import this_node
from horarium.engine.plans import Plans
from horarium.engine.scheduler import Scheduler
from horarium.store.core.schema import job_history, jobs
from horarium.store.resources.run_requests import request_run
from horarium.store.runs.store import Runs
from tests.engine.engine_support import FakeClock, Sink, Store, engine_settings, http
from tests.support import fresh_pg_database

pytestmark = pytest.mark.postgres

LOCKING = re.compile(r"\bFOR (NO KEY )?UPDATE\b")
WRITE = re.compile(r"^(UPDATE (jobs|job_executions)\b|DELETE FROM (jobs|job_executions)\b)")


@pytest.fixture
def db_url() -> Iterator[str]:
    with fresh_pg_database() as url:
        yield url


class Transactions:
    """The statements of each transaction on an engine, in order."""

    def __init__(self, db: AsyncEngine) -> None:
        self.done: list[list[str]] = []
        self._open: dict[int, list[str]] = {}
        sync = db.sync_engine
        event.listen(sync, "begin", self._begin)
        event.listen(sync, "before_cursor_execute", self._statement)
        event.listen(sync, "commit", self._end)
        event.listen(sync, "rollback", self._end)

    def _begin(self, conn: Any) -> None:
        self._open[id(conn)] = []

    def _statement(self, conn: Any, cursor: Any, sql: str, *args: Any) -> None:
        self._open.setdefault(id(conn), []).append(" ".join(sql.split()))

    def _end(self, conn: Any) -> None:
        statements = self._open.pop(id(conn), [])
        if statements:
            self.done.append(statements)


def lock_order_problems(transaction: list[str]) -> list[str]:
    problems = []
    locked: set[str] = set()  # tables this transaction has locked rows of, in order
    for sql in transaction:
        if LOCKING.search(sql) and "SKIP LOCKED" not in sql:
            table = _table(sql)
            if f"ORDER BY {table}.id" not in sql:
                problems.append(f"locks rows not in id order: {sql}")
            if table == "jobs" and "job_executions" in locked:
                problems.append(f"waits for a job row after a job_executions row: {sql}")
            locked.add(table)
        elif LOCKING.search(sql):
            locked.add(_table(sql))
        found = WRITE.match(sql)
        if found:
            table = found.group(2) or found.group(3)
            if table not in locked:
                problems.append(f"writes rows it did not lock first: {sql}")
    return problems


async def _recorded(db: AsyncEngine, entries: int) -> None:
    """Until the history holds at least `entries` entries (at most 10 s)."""
    for _ in range(200):
        async with db.connect() as conn:
            found = (await conn.execute(select(func.count()).select_from(job_history))).scalar()
        if (found or 0) >= entries:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"fewer than {entries} history entries after 10 s")


def _table(sql: str) -> str:
    found = re.search(r"\bFROM (\w+)", sql)
    return found.group(1) if found else "?"


async def test_every_engine_transaction_takes_its_row_locks_in_one_order(
    db: AsyncEngine, store: Store, sink: Sink, clock: FakeClock, actions: Actions
) -> None:
    seen = Transactions(db)
    sink.delay = 0.4  # in flight long enough for several lease renewals
    failing = sink.plan("/fails", 500)
    retried = {"type": "Fixed", "retryInterval": "PT15S", "retryCount": 1}
    error_action = http(sink.to("/error"))
    for i in range(6):
        await store.add(f"ok{i}", {"action": http(sink.to(f"/ok{i}"))})
        await store.add(
            f"bad{i}",
            {"action": {**http(failing), "retryPolicy": retried, "errorAction": error_action}},
        )
    settings = engine_settings(lease_seconds=0.3, node_timeout=0.3, max_in_flight=4, batch_size=3)
    scheduler = Scheduler(db, settings, actions, clock=clock)
    scheduler.start()
    await sink.wait_hits(12)
    await _recorded(db, 12)  # every first attempt ended before the clock moves on
    clock.advance(seconds=20)  # the retries fall due
    async with db.begin() as conn:
        await request_run(
            conn, await store.add("now", {"action": http(sink.to("/now"))}), clock.now()
        )
    scheduler.wake()
    # First attempts, retries, the error actions, the run-now and its job.
    await sink.wait_hits(12 + 6 + 6 + 2)
    await asyncio.sleep(1.0)
    await scheduler.stop()
    # A node that stopped beating, whose executions another one takes over.
    other = Runs(db, "elsewhere:1:dead")
    await other.nodes(this_node(other.owner, clock)).beat(clock.now())
    await store.add("held", {"action": http(sink.to("/held"))})
    claimed = await other.claim(
        clock.now(),
        5,
        lambda: clock.now() + timedelta(minutes=5),
        scheduler.decider.at(clock.now()),
    )
    assert claimed
    survivor = Runs(db, "here:2:alive")
    later = clock.now() + timedelta(seconds=60)
    taken = await survivor.nodes(this_node(survivor.owner, clock)).take_over(
        later, later - timedelta(seconds=15)
    )
    assert taken.nodes == ["elsewhere:1:dead"] and taken.executions == len(claimed)
    await clean_once(db, clock)
    await other.close()
    await survivor.close()

    assert len(seen.done) > 20
    writes = [sql for t in seen.done for sql in t if WRITE.match(sql)]
    assert any("UPDATE jobs SET lease_expires_at" in sql for sql in writes)  # renewals
    assert any("SET phase=" in sql for sql in writes)  # the error actions started
    assert len(sink.on("/error")) == 6
    problems = [p for t in seen.done for p in lock_order_problems(t)]
    assert problems == []


async def test_a_renewal_passes_over_a_row_another_transaction_holds_and_renews_the_rest(
    db: AsyncEngine, store: Store, sink: Sink, clock: FakeClock
) -> None:
    """A renewal never waits for a row lock: kept waiting behind this process's own record of
    some executions (or an API write), it used to renew none of the others until that
    transaction ended, and with short leases those ran out and another node ran them again. The
    row held is renewed by the next renewal once it is free; each lease's end is read once the
    rows are locked."""
    decider = Decider(Plans(100), timedelta(seconds=60))
    held_id = await store.add("held", {"action": http(sink.to("/held"))})
    free_id = await store.add("free", {"action": http(sink.to("/free"))})
    runs = Runs(db, "here:1:renewing")
    lease = timedelta(seconds=30)
    claimed = await runs.claim(clock.now(), 2, lambda: clock.now() + lease, decider.at(clock.now()))
    assert sorted(c.job.id for c in claimed) == sorted([held_id, free_id])
    claimed_until = (await store.job(held_id)).lease_expires_at

    def until() -> datetime:
        return datetime.now(UTC) + lease

    async with db.connect() as other:
        await other.execute(select(jobs.c.id).where(jobs.c.id == held_id).with_for_update())
        async with asyncio.timeout(20):  # it does not wait for the row `other` holds
            began = datetime.now(UTC)
            await runs.renew(claimed, until)
        assert (await store.job(held_id)).lease_expires_at == claimed_until
        assert (await store.job(free_id)).lease_expires_at > began + lease
        await other.rollback()
    began = datetime.now(UTC)
    await runs.renew(claimed, until)  # the next renewal, the row free again
    await runs.close()
    assert (await store.job(held_id)).lease_expires_at > began + lease
