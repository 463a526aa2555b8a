"""A jittered job run by the real engine starts where `upcoming` said it would, plans its next
execution where `upcoming` put it, and its retry keeps that execution's offset
(docs/recurrence.md §10): on SQLite and on PostgreSQL."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.api.api_client import Api, http_job
from tests.server_fixtures import engine_server as engine_server
from tests.server_process import ServerProcess

WAIT_SECONDS = 60.0


class FailingTarget:
    """A real HTTP server on 127.0.0.1 that answers 500 and records when it was called."""

    def __init__(self) -> None:
        self.calls: list[datetime] = []
        calls = self.calls

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                calls.append(datetime.now(UTC))
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(500)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _instant(text: str) -> datetime:
    """An API date-time (`…Z`, up to seven fractional digits) as an aware datetime."""
    head, _, fraction = text.rstrip("Z").partition(".")
    value = datetime.fromisoformat(head).replace(tzinfo=UTC)
    return value + timedelta(microseconds=int((fraction + "000000")[:6]))


def test_the_engine_starts_a_jittered_execution_where_upcoming_said(
    engine_server: ServerProcess,
) -> None:
    target = FailingTarget()
    api = Api(engine_server)
    try:
        name = api.new_collection()
        nominal = (datetime.now(UTC) + timedelta(seconds=3)).replace(microsecond=0)
        body = http_job(
            target.url,
            startTime=nominal.strftime("%Y-%m-%dT%H:%M:%SZ"),
            recurrence={"frequency": "Minute", "interval": 1, "count": 2, "jitter": "PT8S"},
        )
        body["properties"]["action"]["request"]["method"] = "POST"
        body["properties"]["action"]["retryPolicy"] = {
            "retryType": "Fixed",
            "retryInterval": "00:00:15",
            "retryCount": 1,
        }
        stored = api.put(api.job(name, "jittered"), body).json()["properties"]
        predicted = api.get(api.job(name, "jittered") + "/upcoming").json()["value"]
        assert len(predicted) == 2
        expected = _instant(predicted[0]["executionTime"])
        assert _instant(predicted[0]["scheduledExecutionTime"]) == nominal
        assert expected - nominal == _span(predicted[0]["jitterOffset"]) < timedelta(seconds=8)
        assert _instant(stored["status"]["nextExecutionTime"]) == expected

        history = _wait_for_history(api, api.job(name, "jittered") + "/history", 2)
        attempts = sorted(history, key=lambda e: e["retryCount"])
        assert [e["retryCount"] for e in attempts] == [0, 1]
        for entry in attempts:  # the retry keeps the execution's own (jittered) instant
            assert _instant(entry["expectedExecutionTime"]) == expected
            assert entry["repeatCount"] == 1
        first_start = _instant(attempts[0]["startTime"])
        # The engine sleeps until the expected instant; the event loop's timer (a monotonic
        # clock) may wake it a fraction of a millisecond early on the wall clock.
        early = timedelta(milliseconds=50)
        assert expected - early <= first_start < expected + timedelta(seconds=5)
        assert _instant(attempts[1]["startTime"]) >= first_start + timedelta(seconds=15)
        assert target.calls[0] >= expected - early
        # The engine planned the next execution at claim time: where upcoming put it.
        job = api.get(api.job(name, "jittered")).json()["properties"]
        assert job["status"]["nextExecutionTime"] == predicted[1]["executionTime"]
        assert _instant(predicted[1]["scheduledExecutionTime"]) == nominal + timedelta(minutes=1)
    finally:
        api.http.close()
        target.close()


def _span(text: str) -> timedelta:
    hours, minutes, seconds = text.split(":")
    return timedelta(hours=int(hours), minutes=int(minutes), seconds=float(seconds))


def _wait_for_history(api: Api, path: str, entries: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = [e["properties"] for e in api.get(path).json()["value"]]
        if len(found) >= entries:
            return found
        time.sleep(0.25)
    raise AssertionError(f"{entries} history entries did not appear within {WAIT_SECONDS} s")
