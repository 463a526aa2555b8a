"""Fixtures for the action tests: real servers on 127.0.0.1, an execution context."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from horarium.actions.base import ExecutionContext
from tests.actions.action_context import ServeApp, make_context


@pytest.fixture
def context() -> ExecutionContext:
    return make_context()


@pytest.fixture
async def serve() -> AsyncIterator[ServeApp]:
    """Start an aiohttp app on 127.0.0.1 (optionally with TLS); returns its base URL."""
    runners: list[web.AppRunner] = []

    async def start(app: web.Application, ssl_context: object = None) -> str:
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)  # type: ignore[arg-type]
        await site.start()
        runners.append(runner)
        port = runner.addresses[0][1]
        scheme = "https" if ssl_context else "http"
        return f"{scheme}://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()
