"""Dashboard tests: its extension endpoints (on SQLite and PostgreSQL), its files, and the pages
in a real Chromium against a real `horarium serve`.

The browser tests share one Chromium per test session (per pytest-xdist worker: each is a
session of its own) and get a page in a fresh browser context each, so nothing a test leaves in
the browser reaches another; a module's tests share its server and HTTP target, each test on a
subscription of its own (`api`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.server_process import ServerProcess, running_server
from tests.ui.ui_support import Api, SharedChromium, http_target, launched_chromium


@pytest.fixture(scope="session")
def chromium() -> Iterator[SharedChromium]:
    """The session's headless Chromium, launched on first use and closed at the session's end."""
    with launched_chromium() as browser:
        shared = SharedChromium(browser)
        try:
            yield shared
        finally:
            shared.close()


@pytest.fixture
def page(chromium: SharedChromium) -> Iterator[Any]:
    """A page of the session's Chromium in a browser context of its own."""
    with chromium.page() as fresh:
        yield fresh


@pytest.fixture(scope="module")
def target() -> Iterator[str]:
    """A local HTTP target for the module's jobs (tests/ui/ui_support.py `Target`)."""
    with http_target() as url:
        yield url


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The module's `horarium serve` with its scheduler, on SQLite (a module may define its own)."""
    with running_server(tmp_path_factory.mktemp("dashboard-ui"), engine=True) as process:
        yield process


@pytest.fixture
def api(server: ServerProcess) -> Iterator[Api]:
    """The admin's API client for `server`, on a fresh subscription."""
    client = Api(server)
    with client.http:
        yield client
