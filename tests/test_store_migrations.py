"""The schema is created by the migrations, on SQLite and PostgreSQL, and re-running is a no-op."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import inspect

from horarium.store.core.db import create_engine, migrate
from tests.support import fresh_pg_database


async def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        await migrate(engine)
        await migrate(engine)  # idempotent
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_sqlite_file_gets_schema_in_wal_mode(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sub' / 'h.sqlite3'}"
    tables = await _tables(url)
    assert {"job_collections", "jobs", "job_history", "api_keys", "alembic_version"} <= tables
    engine = create_engine(url)
    async with engine.connect() as conn:
        mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
    await engine.dispose()
    assert mode == "wal"


@pytest.mark.postgres
def test_postgres_gets_schema() -> None:
    import asyncio

    with fresh_pg_database() as url:
        tables = asyncio.run(_tables(url))
    assert {"job_collections", "jobs", "job_history", "api_keys", "alembic_version"} <= tables
