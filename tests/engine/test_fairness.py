"""Fairness between collections, end to end: `horarium serve` with 100 slots, 250 jobs of one or
of five collections hung on an endpoint that never answers (more than every slot and the ready
batch), and an unrelated collection's jobs, which still start on time (docs/engine.md,
"Fairness between collections": suspect collections share nine tenths of the slots, and a
collection holding nothing may take one of the tenth kept from them).

The bound is the issue's: a second of delay at most. Without the reserve the unrelated jobs
would wait for the hung attempts to time out (`--http-timeout`), so the margin is wide."""

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
SLOTS = 100  # --max-in-flight: a tenth (10) is kept from suspect collections
POOL = 90  # what suspect collections share
HUNG = 250  # hung jobs in all: beyond the slots and the ready batch (100 + 100)
PUNCTUAL = 3
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


@pytest.mark.parametrize("hung_collections", [1, 5])
def test_hung_collections_do_not_delay_another_collections_jobs(
    database: str, hung_collections: int, tmp_path: Path
) -> None:
    servers = LiveServers()
    sink = Recorder()
    sink.slow("/hang", 3600.0)  # never answers (within the test)
    url = servers.sink(sink)
    # Hung attempts outlast the test (they would end after --http-timeout); the stop at the end
    # does not wait for them.
    args = ["--max-in-flight", str(SLOTS), "--http-timeout", "600", "--drain-seconds", "0"]
    try:
        with serving(database, tmp_path, engine=True, args=args) as server:
            http = httpx.Client(base_url=server.base_url, timeout=30, headers=server.auth_headers())
            body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
            hung = [collection(f"hung{c}") for c in range(hung_collections)]
            punctual = collection("punctual")
            for path in [*hung, punctual]:
                assert http.put(path, params=API, json=body).status_code == 201
            for path in hung:
                for i in range(HUNG // hung_collections):
                    response = http.put(f"{path}/jobs/h{i}", params=API, json=job(f"{url}/hang"))
                    assert response.status_code == 201, response.text
            # The hung collections have taken what they may (the first one half the pool, at
            # least) before the others' jobs are due.
            wait_until(lambda: len(sink.on("/hang")) >= POOL // 2, 60, "the hung jobs to start")

            start = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
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
            # The hung collections held the pool and a slot of the reserve each, at most.
            assert len(sink.on("/hang")) <= POOL + hung_collections
    finally:
        servers.close()
