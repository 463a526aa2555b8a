"""`/metrics` of a real `horarium serve` with its scheduler counts what a job's
`executionPolicy` and backfill did: executions skipped and buffered by the overlap policy,
backfill executions queued and ended (the counters start at zero in a fresh process)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.samples import Sample

from tests.ops.ops_support import API, Jobs, Target, http_target, samples, value
from tests.server_process import ServerProcess, running_server
from tests.support import wait_until


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    with running_server(tmp_path, engine=True) as process:
        yield process


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _soon() -> str:
    return _iso(datetime.now(UTC) + timedelta(seconds=2))


def _hourly(uri: str, **policy: str) -> dict[str, Any]:
    """Hourly from `_soon()`; a failed attempt is retried once, an hour later."""
    retry = {"retryType": "Fixed", "retryInterval": "PT1H", "retryCount": 1}
    return {
        "properties": {
            "startTime": _soon(),
            "action": {
                "type": "Http",
                "request": {"uri": uri, "method": "POST"},
                "retryPolicy": retry,
            },
            "recurrence": {"frequency": "Hour", "interval": 1},
            "executionPolicy": policy,
        }
    }


def _scrape(server: ServerProcess) -> list[Sample]:
    answer = httpx.get(server.url("/metrics"), headers=server.auth_headers(), timeout=10)
    assert answer.status_code == 200, answer.text
    return samples(answer.text)


def test_skipped_buffered_and_backfill_executions_are_counted(server: ServerProcess) -> None:
    target: Target
    with http_target() as target:
        jobs = Jobs(server)
        before = _scrape(server)
        assert value(before, "horarium_skipped_total") == 0
        assert value(before, "horarium_buffered_total") == 0
        assert value(before, "horarium_backfill_queued_total") == 0
        assert {
            s.labels["outcome"] for s in before if s.name == "horarium_backfill_executions_total"
        } == {"succeeded", "error_action_succeeded", "faulted"}

        for name, overlap in (("skips", "Skip"), ("buffers", "BufferOne")):
            body = _hourly(f"{target.url}/fail-{name}", overlap=overlap)
            made = jobs.http.put(f"{jobs.collection}/jobs/{name}", params=API, json=body)
            assert made.status_code == 201, made.text
        for name in ("skips", "buffers"):  # the first execution fails: its retry is an hour away
            wait_until(lambda name=name: jobs.history(name), f"the first attempt of {name}")
        for name in ("skips", "buffers"):  # a new start: an execution falls due while it waits
            patch = {"properties": {"startTime": _soon()}}
            changed = jobs.http.patch(f"{jobs.collection}/jobs/{name}", params=API, json=patch)
            assert changed.status_code == 200, changed.text
        skipped = wait_until(
            lambda: [h for h in jobs.history("skips") if h.get("status") == "Skipped"],
            "the skipped execution",
        )
        assert "executionPolicy.overlap is Skip" in skipped[0]["message"]
        wait_until(lambda: value(_scrape(server), "horarium_buffered_total") >= 1, "a buffer")

        body = _hourly(f"{target.url}/ok")
        body["properties"]["startTime"] = "2020-01-01T00:00:00Z"
        made = jobs.http.put(f"{jobs.collection}/jobs/backfilled", params=API, json=body)
        assert made.status_code == 201, made.text
        asked = {"from": "2024-05-01T12:00:00Z", "to": "2024-05-01T14:00:00Z"}
        queued = jobs.http.post(
            f"{jobs.collection}/jobs/backfilled/backfill", params=API, json=asked
        )
        assert queued.status_code == 200 and queued.json()["queued"] == 2, queued.text
        wait_until(
            lambda: (
                len(
                    [h for h in jobs.history("backfilled") if h["message"].startswith("Backfill: ")]
                )
                == 2
            ),
            "two backfill executions",
        )
        after = wait_until(
            lambda: (
                found
                if value(found := _scrape(server), "horarium_backfill_executions_total") >= 2
                else None
            ),
            "the backfill executions counted",
        )
        jobs.close()

    assert value(after, "horarium_skipped_total") == 1
    assert value(after, "horarium_buffered_total") == 1
    assert value(after, "horarium_backfill_queued_total") == 2
    assert value(after, "horarium_backfill_executions_total", outcome="succeeded") == 2
    assert value(after, "horarium_backfill_executions_total", outcome="faulted") == 0
