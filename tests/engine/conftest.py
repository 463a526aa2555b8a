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
from horarium.store.core.db import create_engine, migrate
from horarium.store.core.sealing import Keyring
from tests.engine.engine_support import FakeClock, Sink, Store, engine_settings
from tests.support import fresh_pg_database


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


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The same test on a SQLite file and on a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'h.sqlite3'}"
    else:
        with fresh_pg_database() as url:
            yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'h.sqlite3'}"


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(db_url, keyring=Keyring.generate())
    await migrate(engine)
    yield engine
    await engine.dispose()


@pytest.fixture
async def sqlite_db(sqlite_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(sqlite_url, keyring=Keyring.generate())
    await migrate(engine)
    yield engine
    await engine.dispose()


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
