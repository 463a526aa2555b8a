"""Fairness between collections, end to end: `horarium serve` with its defaults, 600 jobs of one
collection hung on an endpoint that never answers, and an unrelated collection's jobs, which
still start on time (`--collection-share`: one collection holds at most half the slots).

The bound is the issue's: a second of delay at most. Without a share the unrelated jobs would
wait for the hung attempts to time out (`--http-timeout`, 60 s), so the margin is wide."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.engine.live_servers import LiveServers, Recorder, wait_until
from tests.server_process import DATABASES, serving

API = {"api-version": "2016-03-01"}
HUNG = 600
PUNCTUAL = 5
MAX_DELAY = 1.0  # seconds (the bound)


@pytest.fixture(params=DATABASES)
def database(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def collection(name: str) -> str:
    return (
        f"/subscriptions/sub-{uuid.uuid4().hex[:6]}/resourceGroups/rg"
        f"/providers/Microsoft.Scheduler/jobCollections/{name}"
    )


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def job(uri: str, start: datetime | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "action": {"type": "Http", "request": {"uri": uri, "method": "GET"}}
    }
    if start is not None:
        properties["startTime"] = iso(start)
    return {"properties": properties}


def test_hung_collection_does_not_delay_another_collections_jobs(
    database: str, tmp_path: Path
) -> None:
    servers = LiveServers()
    sink = Recorder()
    sink.slow("/hang", 3600.0)  # never answers (within the test)
    url = servers.sink(sink)
    try:
        # Hung attempts outlast the test (they would end after --http-timeout).
        with serving(database, tmp_path, engine=True, args=["--http-timeout", "600"]) as server:
            http = httpx.Client(base_url=server.base_url, timeout=30, headers=server.auth_headers())
            body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
            hung, punctual = collection("hung"), collection("punctual")
            for path in (hung, punctual):
                assert http.put(path, params=API, json=body).status_code == 201
            for i in range(HUNG):
                response = http.put(f"{hung}/jobs/h{i}", params=API, json=job(f"{url}/hang"))
                assert response.status_code == 201, response.text
            # The hung collection has taken every slot it may before the others' jobs are due.
            wait_until(lambda: len(sink.on("/hang")) >= 200, 60, "the hung jobs to start")

            start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=3)
            expected = {f"p{i}": start + timedelta(seconds=i) for i in range(PUNCTUAL)}
            for name, at in expected.items():
                response = http.put(
                    f"{punctual}/jobs/{name}", params=API, json=job(f"{url}/{name}", at)
                )
                assert response.status_code == 201, response.text
            wait_until(
                lambda: all(sink.on(f"/{name}") for name in expected),
                PUNCTUAL + 30,
                "the punctual jobs to run",
            )
            for name, at in expected.items():
                arrived = datetime.fromtimestamp(sink.on(f"/{name}")[0].at, UTC)
                delay = (arrived - at).total_seconds()
                assert delay < MAX_DELAY, f"{name} started {delay:.2f} s late"
            # The hung collection never held more than its share (half of --max-in-flight).
            assert len(sink.on("/hang")) <= 250
    finally:
        servers.close()
