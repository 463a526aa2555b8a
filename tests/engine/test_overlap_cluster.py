"""`executionPolicy.overlap` Skip holds across processes on PostgreSQL: two `horarium worker`
processes on one database next to an API-only `horarium serve`. A job's execution fails and
waits for its retry; meanwhile its next scheduled execution falls due (Skipped, whichever
process claims it) and a backfill queues more executions, which then run one at a time across
both processes. The receiver notes when each request began and ended: none overlaps."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from tests.engine.cluster_support import (
    API,
    COLLECTION,
    cluster,
    http_action,
    log_lines,
    make_collection,
    put_jobs,
    stop_workers,
)
from tests.engine.live_servers import Recorder, listening, wait_until

pytestmark = pytest.mark.postgres

ARGS = ["--node-timeout", "5", "--poll-interval", "0.5"]
SLOW = 1.5  # seconds each request to the job's endpoint takes
BACKFILLED = 6


@dataclass
class Spans(Recorder):
    """A Recorder that also notes, per request, when it began and when its answer was ready."""

    spans: list[tuple[float, float]] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        began = time.monotonic()
        answer = await super().handle(request)
        with self.lock:
            self.spans.append((began, time.monotonic()))
        return answer


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_overlap_skip_holds_across_two_worker_processes(tmp_path: Path) -> None:
    sink = Spans()
    sink.slow("/serial", SLOW)
    sink.answer("/serial", 500, 200)  # the first attempt fails; everything after succeeds
    job = f"{COLLECTION}/jobs/serial"
    with listening(sink) as url, cluster(tmp_path, 2, ARGS) as nodes:
        http = nodes.http
        make_collection(http)
        nodes.start_workers()
        # Every minute, at a second 10 s from now: the first execution is 10 s away, the
        # second 70 s. The failed first attempt's retry waits 80 s: the second falls due
        # while the first execution is unfinished.
        first = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=10)
        anchor = datetime(2020, 1, 1, 0, first.minute, first.second, tzinfo=UTC)
        retry = {"retryType": "Fixed", "retryInterval": "00:01:20", "retryCount": 1}
        action = {**http_action(f"{url}/serial"), "retryPolicy": retry}
        put_jobs(
            http,
            {
                "serial": {
                    "startTime": _iso(anchor),
                    "action": action,
                    "recurrence": {"frequency": "Minute", "interval": 1},
                    "executionPolicy": {"overlap": "Skip"},
                }
            },
        )

        def history() -> list[dict[str, str]]:
            found = http.get(f"{job}/history", params=API).json()["value"]
            return [entry["properties"] for entry in found]

        wait_until(lambda: history(), 60, "the first attempt")
        backfill = {"from": "2024-05-01T12:00:00Z", "to": "2024-05-01T12:06:00Z"}
        queued = http.post(f"{job}/backfill", params=API, json=backfill)
        assert queued.status_code == 200, queued.text
        assert queued.json()["queued"] == BACKFILLED

        def finished() -> list[dict[str, str]] | None:
            found = history()
            backfilled = [h for h in found if h["message"].startswith("Backfill: ")]
            retried = [h for h in found if h["retryCount"] == 1]
            return found if len(backfilled) == BACKFILLED and retried else None

        wait_until(finished, 180, "the retry and the backfill executions")
        assert stop_workers(nodes.workers) == [0, 0]
        entries = history()

    skipped = [h for h in entries if h.get("status") == "Skipped"]
    assert skipped, entries
    assert skipped[-1]["repeatCount"] == 2
    assert "executionPolicy.overlap is Skip" in skipped[-1]["message"]
    # One request per attempt that ran: the first one, its retry, the backfill executions.
    ran = [h for h in entries if h.get("status") != "Skipped"]
    with sink.lock:
        spans = sorted(sink.spans)
    assert len(spans) == len(ran) >= 2 + BACKFILLED
    overlaps = [(a, b) for a, b in itertools.pairwise(spans) if b[0] < a[1]]
    assert overlaps == [], f"requests overlapped: {overlaps}"
    assert log_lines(nodes.logs, "deadlock", "Traceback") == []
