"""How the engine's transactions run on PostgreSQL: a transaction PostgreSQL picks as a
deadlock's victim is run again, and both sides commit; other errors are not retried."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.db import create_engine, migrate
from horarium.store.core.schema import engine_marks
from horarium.store.runs.transact import Transactor
from tests.support import fresh_pg_database

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_pg_database() as url:
        yield url


@pytest.fixture
async def pg(pg_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(pg_url)
    await migrate(engine)
    async with engine.begin() as conn:
        rows = [{"name": "a", "value": 0}, {"name": "b", "value": 0}]
        await conn.execute(insert(engine_marks), rows)
    yield engine
    await engine.dispose()


def _bump_both(first: str, second: str, runs: list[str]):  # type: ignore[no-untyped-def]
    """A transaction that locks `first`, waits for the other side to lock its row, then
    `second`: two of them in opposite orders deadlock."""

    def work(conn: Connection) -> None:
        runs.append(first)
        bump = update(engine_marks).values(value=engine_marks.c.value + 1)
        conn.execute(bump.where(engine_marks.c.name == first))
        conn.exec_driver_sql("SELECT pg_sleep(0.5)")
        conn.execute(bump.where(engine_marks.c.name == second))

    return work


async def test_a_deadlock_victim_is_run_again_and_both_transactions_commit(
    pg: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    transactor = Transactor(pg)
    runs: list[str] = []
    with caplog.at_level(logging.WARNING, logger="horarium.store.runs.transact"):
        await asyncio.gather(
            transactor.write(_bump_both("a", "b", runs), "a then b"),
            transactor.write(_bump_both("b", "a", runs), "b then a"),
        )
    async with pg.connect() as conn:
        values = dict((await conn.execute(select(engine_marks.c.name, engine_marks.c.value))).all())
    assert (values["a"], values["b"]) == (2, 2)  # each committed once
    assert len(runs) == 3  # the victim ran twice
    retries = [r.getMessage() for r in caplog.records if "deadlock detected" in r.getMessage()]
    assert len(retries) == 1, retries


async def test_an_error_that_is_not_transient_is_raised_at_once(pg: AsyncEngine) -> None:
    transactor = Transactor(pg)
    runs = 0

    def duplicate(conn: Connection) -> None:
        nonlocal runs
        runs += 1
        conn.execute(insert(engine_marks).values(name="a", value=1))

    with pytest.raises(IntegrityError):
        await transactor.write(duplicate)
    assert runs == 1
