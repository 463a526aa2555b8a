"""On PostgreSQL the engine writes a record's history rows with one INSERT of arrays
(`store/runs/pg_arrays.py`): the rows are exactly those of the plain form (`RunDialect`: one
INSERT per row)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import ExitStack

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.db import create_engine
from horarium.store.core.sealing import Keyring
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.pg_arrays import ArrayDialect
from tests.engine.dialect_scenario import run_scenario
from tests.migrated_databases import migrated_pg_database

pytestmark = pytest.mark.postgres


@pytest.fixture
async def two_databases() -> AsyncIterator[list[AsyncEngine]]:
    with ExitStack() as stack:
        keyring = Keyring.generate()
        engines = [
            create_engine(stack.enter_context(migrated_pg_database()), keyring=keyring)
            for _ in range(2)
        ]
        yield engines
        for engine in engines:
            await engine.dispose()


async def test_history_in_one_insert_of_arrays_writes_the_same_rows_as_one_insert_per_row(
    two_databases: list[AsyncEngine],
) -> None:
    plain_db, arrays_db = two_databases
    plain = await run_scenario(plain_db, RunDialect())
    in_arrays = await run_scenario(arrays_db, ArrayDialect())
    assert len(plain["job_history"]) >= 8
    assert in_arrays == plain
