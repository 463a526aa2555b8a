"""The SQLite fast path of the record statements (`store/runs/sqlite_fast.py`) writes exactly
what the plain form (`SQLiteDialect`: SQLAlchemy's own parameter handling) writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.deciding import Decider
from horarium.engine.dispatcher import Dispatcher
from horarium.engine.plans import Plans
from horarium.engine.recorder import Recorder
from horarium.store.core.db import create_engine, migrate
from horarium.store.core.sealing import Keyring
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.sqlite_fast import FastSQLiteDialect, SQLiteDialect
from horarium.store.runs.store import Runs
from tests.engine.engine_support import FakeClock, Store, engine_settings
from tests.engine.scripted_actions import ScriptedActions, action


@pytest.fixture
async def two_files(tmp_path: Path) -> AsyncIterator[list[AsyncEngine]]:
    engines = []
    for name in ("plain", "fast"):
        engine = create_engine(f"sqlite:///{tmp_path / name}.sqlite3", keyring=Keyring.generate())
        await migrate(engine)
        engines.append(engine)
    yield engines
    for engine in engines:
        await engine.dispose()


async def _run_scenario(db: AsyncEngine, dialect: RunDialect) -> dict[str, list[Any]]:
    """Jobs of every kind through two rounds of the engine; then every row the engine wrote."""
    store, clock, actions = Store(db), FakeClock(), ScriptedActions()
    retry = {"retryType": "Fixed", "retryInterval": "00:00:15", "retryCount": 1}
    await store.add("once", {"action": action("/once")})
    await store.add("faulting", {"action": action("/bad", retryPolicy=retry)})
    await store.add("erring", {"action": action("/bad", errorAction=action("/err"))})
    every_minute = {"frequency": "Minute", "interval": 1, "count": 2}
    await store.add("series", {"action": action("/s"), "recurrence": every_minute})
    actions.planned["/bad"] = [False]
    runs = Runs(db, "owner", dialect)
    recorder = Recorder(runs, clock)
    decider = Decider(Plans(100), timedelta(seconds=60))
    dispatcher = Dispatcher(runs, actions, engine_settings(), clock, recorder, decider)
    for _ in range(4):
        await dispatcher.drain()
        clock.advance(seconds=30)
    await runs.close()
    async with db.connect() as conn:  # the stored text itself, not values read back
        return {
            table: [tuple(row) for row in await conn.exec_driver_sql(f"SELECT * FROM {table}")]
            for table in ("jobs", "job_history", "job_executions")
        }


async def test_the_fast_path_writes_the_same_rows_as_the_plain_form(
    two_files: list[AsyncEngine],
) -> None:
    plain_db, fast_db = two_files
    plain = await _run_scenario(plain_db, SQLiteDialect())
    fast = await _run_scenario(fast_db, FastSQLiteDialect())
    assert len(plain["job_history"]) >= 8
    assert isinstance(plain["job_history"][0][8], str)  # start_time, as SQLite holds it
    assert fast == plain
