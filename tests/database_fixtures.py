"""Fixtures of the tests that run on each database (a SQLite file, a fresh PostgreSQL database);
a conftest.py or test module takes them with `from tests.database_fixtures import db_url as
db_url` (and `db`); `migrated` is the store on a URL for a test's own fixture."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.db import create_engine, migrate
from horarium.store.core.sealing import Keyring
from tests.migrated_databases import migrated_pg_database, migrated_sqlite_file
from tests.server_process import DATABASES


@pytest.fixture(params=DATABASES)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The same test on a SQLite file and on a fresh PostgreSQL database, both already migrated
    (`tests.migrated_databases`)."""
    if request.param == "sqlite":
        yield migrated_sqlite_file(tmp_path / "h.sqlite3")
    else:
        with migrated_pg_database() as url:
            yield url


@asynccontextmanager
async def migrated(url: str, keyring: Keyring | None = None) -> AsyncIterator[AsyncEngine]:
    """An engine on `url` with the store's schema migrated in; disposed at the end."""
    engine = create_engine(url, keyring=keyring)
    try:
        await migrate(engine)
        yield engine
    finally:
        await engine.dispose()


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[AsyncEngine]:
    """The store on `db_url`, its secrets sealed with a keyring of its own."""
    async with migrated(db_url, Keyring.generate()) as engine:
        yield engine
