"""Fixtures for the engine tests: a real database (SQLite file, or PostgreSQL), a real HTTP sink
on 127.0.0.1, the real action runner, a clock the test moves."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.engine.scheduler import Scheduler
from horarium.store.core.sealing import Keyring
from tests.database_fixtures import db as db
from tests.database_fixtures import db_url as db_url
from tests.database_fixtures import migrated
from tests.engine.engine_support import FakeClock, Sink, Store, engine_settings
from tests.migrated_databases import migrated_sqlite_file


@pytest.fixture
async def sink() -> AsyncIterator[Sink]:
    s = Sink()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", s.handle)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    s.url = f"http://127.0.0.1:{port}"
    yield s
    await runner.cleanup()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return migrated_sqlite_file(tmp_path / "h.sqlite3")


@pytest.fixture
async def sqlite_db(sqlite_url: str) -> AsyncIterator[AsyncEngine]:
    async with migrated(sqlite_url, Keyring.generate()) as engine:
        yield engine


@pytest.fixture
def store(db: AsyncEngine) -> Store:
    return Store(db)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def actions() -> AsyncIterator[Actions]:
    async with Actions(engine_settings()) as runner:
        yield runner


@pytest.fixture
def make_scheduler(db: AsyncEngine, actions: Actions, clock: FakeClock) -> Iterator[Any]:
    def make(**settings: Any) -> Scheduler:
        return Scheduler(db, engine_settings(**settings), actions, clock=clock)

    yield make
