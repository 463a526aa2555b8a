"""API tests run against a real `horarium serve` process, on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.api_client import Api
from tests.server_process import DATABASES, ServerProcess, serving


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """One server per test module and database (tests use their own subscription ids)."""
    with serving(request.param, tmp_path_factory.mktemp(f"server-{request.param}")) as process:
        yield process


@pytest.fixture
def api(server: ServerProcess) -> Iterator[Api]:
    client = Api(server)
    yield client
    client.http.close()
