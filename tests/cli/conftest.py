"""The management commands against a real `horarium serve` (SQLite, no scheduler), driven in
process with click's CliRunner. Each test works in a subscription of its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.api_client import Api
from tests.cli.cli_runner import Cli
from tests.http_receiver import Receiver
from tests.server_process import ServerProcess, running_server

CLI_VARIABLES = (
    "HORARIUM_URL",
    "HORARIUM_TOKEN",
    "HORARIUM_DATA_DIR",
    "HORARIUM_CA_FILE",
    "HORARIUM_SUBSCRIPTION",
    "HORARIUM_RESOURCE_GROUP",
    "HORARIUM_COLLECTION",
)


@pytest.fixture(autouse=True)
def _no_cli_settings_from_outside(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The commands see only what a test gives them: no HORARIUM_* of the caller's shell, and a
    working folder without a horarium-data/admin-token."""
    for name in CLI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with running_server(tmp_path_factory.mktemp("cli-server")) as process:
        yield process


@pytest.fixture
def subscription() -> str:
    return f"sub-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def api(cli_server: ServerProcess, subscription: str) -> Iterator[Api]:
    client = Api(cli_server, subscription)
    yield client
    client.http.close()


@pytest.fixture
def cli(cli_server: ServerProcess, subscription: str) -> Cli:
    """The command line with HORARIUM_URL, HORARIUM_TOKEN and HORARIUM_SUBSCRIPTION set."""
    return Cli(
        {
            "HORARIUM_URL": cli_server.base_url,
            "HORARIUM_TOKEN": cli_server.token or "",
            "HORARIUM_SUBSCRIPTION": subscription,
        }
    )


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture(scope="session")
def engine_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A service that also runs the scheduler (its jobs call `receiver`)."""
    with running_server(tmp_path_factory.mktemp("cli-engine"), engine=True) as process:
        yield process


@pytest.fixture
def engine_cli(engine_server: ServerProcess, subscription: str) -> Cli:
    return Cli(
        {
            "HORARIUM_URL": engine_server.base_url,
            "HORARIUM_TOKEN": engine_server.token or "",
            "HORARIUM_SUBSCRIPTION": subscription,
        }
    )
