"""Fixtures of the tests that talk to a real `horarium serve` on each database; a conftest.py
or test module takes them with `from tests.server_fixtures import server as server` (and `api
as api`, `engine_server as engine_server`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.api_client import Api
from tests.server_process import DATABASES, ServerProcess, serving


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One server per test module and database (tests use their own subscription ids; a module
    may define its own `server`, e.g. with other options)."""
    with serving(request.param, tmp_path_factory.mktemp(f"server-{request.param}")) as process:
        yield process


@pytest.fixture(params=DATABASES)
def engine_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    """A server with its scheduler, one per test and database (a test may stop or break it)."""
    with serving(request.param, tmp_path, engine=True) as process:
        yield process


@pytest.fixture
def api(server: ServerProcess) -> Iterator[Api]:
    """The API tests' client (tests/api/api_client.py) for `server`."""
    client = Api(server)
    yield client
    client.http.close()
