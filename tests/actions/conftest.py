"""Fixtures for the action tests: real servers on 127.0.0.1, an execution context, a runner."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime

import pytest
from aiohttp import web

from horarium.actions.base import ExecutionContext

JOB_ID = (
    "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Scheduler"
    "/jobCollections/coll-1/jobs/job-1"
)
COLLECTION_ID = (
    "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Scheduler/jobCollections/coll-1"
)


def make_context(**changes: object) -> ExecutionContext:
    values: dict[str, object] = {
        "job_id": JOB_ID,
        "collection_id": COLLECTION_ID,
        "execution_tag": uuid.uuid4().hex,
        "client_request_id": str(uuid.uuid4()),
        "expected_time": datetime(2024, 5, 1, 12, 30, 0, tzinfo=UTC),
        "region": "West Europe",
    }
    values.update(changes)
    return ExecutionContext(**values)  # type: ignore[arg-type]


@pytest.fixture
def context() -> ExecutionContext:
    return make_context()


ServeApp = Callable[..., Awaitable[str]]


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
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        scheme = "https" if ssl_context else "http"
        return f"{scheme}://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()
