"""API tests run against a real `horarium serve` process, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_client import Api
from server_process import ServerProcess, running_server

from support import fresh_pg_database


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One server per test module and database (tests use their own subscription ids)."""
    workdir: Path = tmp_path_factory.mktemp(f"server-{request.param}")
    if request.param == "postgres":
        with fresh_pg_database() as url, running_server(workdir, database=url) as process:
            yield process
    else:
        with running_server(workdir) as process:
            yield process


@pytest.fixture
def api(server: ServerProcess) -> Iterator[Api]:
    client = Api(server)
    yield client
    client.http.close()
