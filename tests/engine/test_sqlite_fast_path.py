"""The SQLite fast path of the record statements (`store/runs/sqlite_fast.py`) writes exactly
what the plain form (`SQLiteDialect`: SQLAlchemy's own parameter handling) writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.db import create_engine, migrate
from horarium.store.core.sealing import Keyring
from horarium.store.runs.sqlite_fast import FastSQLiteDialect, SQLiteDialect
from tests.engine.dialect_scenario import run_scenario


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


async def test_the_fast_path_writes_the_same_rows_as_the_plain_form(
    two_files: list[AsyncEngine],
) -> None:
    plain_db, fast_db = two_files
    plain = await run_scenario(plain_db, SQLiteDialect())
    fast = await run_scenario(fast_db, FastSQLiteDialect())
    assert len(plain["job_history"]) >= 8
    assert isinstance(plain["job_history"][0][8], str)  # start_time, as SQLite holds it
    assert fast == plain
