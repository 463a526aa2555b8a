"""Exponential backoff and payload templates through the API: what is stored and shown, and
(with the scheduler running in the server) what a templated job's requests carry."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.api.api_client import Api, error_of, http_job
from tests.server_process import ServerProcess, running_server
from tests.support import wait_until


def _exponential_job(**changes: Any) -> dict[str, Any]:
    body = http_job()
    body["properties"]["action"]["retryPolicy"] = {
        "retryType": "exponential",
        "retryInterval": "PT20S",
        "maxRetryInterval": "PT10M",
        "retryCount": 6,
    }
    body["properties"]["action"].update(changes)
    return body


def test_an_exponential_policy_is_stored_and_shown_like_the_others(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "backoff")
    response = api.put(path, _exponential_job())
    assert response.status_code == 201, response.text
    shown = {
        "retryType": "exponential",  # the live casing, as for "fixed"
        "retryInterval": "00:00:20",
        "retryCount": 6,
        "maxRetryInterval": "00:10:00",
    }
    assert response.json()["properties"]["action"]["retryPolicy"] == shown
    assert api.get(path).json()["properties"]["action"]["retryPolicy"] == shown
    # Switching to Fixed needs the cap removed with it (a PATCH merges).
    fixed = {"properties": {"action": {"retryPolicy": {"retryType": "Fixed"}}}}
    response = api.patch(path, fixed)
    assert response.status_code == 400
    assert (
        "retryPolicy.maxRetryInterval: only with retryType Exponential"
        in (error_of(response)["message"])
    )
    fixed["properties"]["action"]["retryPolicy"]["maxRetryInterval"] = None  # type: ignore[index]
    response = api.patch(path, fixed)
    assert response.status_code == 200, response.text
    assert response.json()["properties"]["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": "00:00:20",
        "retryCount": 6,
    }


def test_templated_is_stored_on_the_action_and_a_job_without_it_shows_nothing_new(
    api: Api,
) -> None:
    name = api.new_collection()
    templated = http_job("http://127.0.0.1:9/{{jobName}}?tag={{ executionTag }}")
    templated["properties"]["action"]["templated"] = True
    templated["properties"]["action"]["errorAction"] = {
        "type": "Http",
        "request": {"uri": "http://127.0.0.1:9/e", "method": "POST", "body": "{{attempt}}"},
    }
    response = api.put(api.job(name, "t"), templated)
    assert response.status_code == 201, response.text
    action = api.get(api.job(name, "t")).json()["properties"]["action"]
    assert action["templated"] is True
    assert action["request"]["uri"] == "http://127.0.0.1:9/{{jobName}}?tag={{ executionTag }}"
    assert "templated" not in action["errorAction"]

    # false is the default: not stored; without the flag placeholders are plain text.
    plain = http_job("http://127.0.0.1:9/{{whatever}}")
    plain["properties"]["action"]["templated"] = False
    response = api.put(api.job(name, "p"), plain)
    assert response.status_code == 201, response.text
    action = response.json()["properties"]["action"]
    assert action == {
        "request": {"uri": "http://127.0.0.1:9/{{whatever}}", "method": "GET"},
        "type": "Http",
    }
    # Removing the flag with a PATCH.
    response = api.patch(api.job(name, "t"), {"properties": {"action": {"templated": None}}})
    assert response.status_code == 200, response.text
    assert "templated" not in response.json()["properties"]["action"]


def test_openapi_documents_the_extensions(api: Api) -> None:
    schemas = api.http.get("/openapi.json").json()["components"]["schemas"]
    retry = schemas["RetryPolicy"]["properties"]
    assert retry["retryType"]["enum"] == ["None", "Fixed", "Exponential"]
    assert "one day" in retry["maxRetryInterval"]["description"]
    assert "{{executionTag}}" in schemas["JobAction"]["properties"]["templated"]["description"]


# -- through the scheduler -------------------------------------------------------------------


class Target:
    """A real HTTP server on 127.0.0.1 recording every request; answers 500 while `failing`
    requests remain, then 200."""

    def __init__(self, failing: int = 0) -> None:
        self.received: list[dict[str, Any]] = []
        self.failing = failing
        target = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                target.received.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": self.rfile.read(length).decode(),
                        "at": datetime.now(UTC),
                    }
                )
                fail = target.failing > 0 and not self.path.startswith("/error")
                target.failing -= fail
                self.send_response(500 if fail else 200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def engine_server(tmp_path: Path) -> Iterator[ServerProcess]:
    with running_server(tmp_path, engine=True) as server:
        yield server


def _templated_job(url: str, **action: Any) -> dict[str, Any]:
    body = http_job(url + "/hook/{{jobName}}?tag={{executionTag}}&at={{scheduledTime}}")
    request = body["properties"]["action"]["request"]
    request["method"] = "POST"
    request["headers"] = {"Content-Type": "application/json", "X-Collection": "{{collectionName}}"}
    request["body"] = (
        '{"tag": "{{executionTag}}", "scheduled": "{{scheduledTime}}",'
        ' "sent": "{{executionTime}}", "attempt": {{attempt}}}'
    )
    body["properties"]["action"].update(templated=True, **action)
    return body


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=UTC)


def test_a_templated_job_sends_its_execution_tag_and_scheduled_time(
    engine_server: ServerProcess,
) -> None:
    """A one-time job runs at once; its error action, templated by the same flag, carries the
    same execution."""
    target = Target(failing=1)
    api = Api(engine_server)
    try:
        name = api.new_collection()
        error_action = {
            "type": "Http",
            "request": {
                "uri": target.url + "/error?attempt={{attempt}}",
                "method": "POST",
                "headers": {"content-type": "text/plain"},
                "body": "{{executionTag}} of {{jobName}} due {{scheduledTime}}",
            },
        }
        body = _templated_job(
            target.url, retryPolicy={"retryType": "None"}, errorAction=error_action
        )
        response = api.put(api.job(name, "templ"), body)
        assert response.status_code == 201, response.text
        main, error = wait_until(lambda: len(target.received) >= 2 and target.received, "calls")

        tag = main["headers"]["x-ms-execution-tag"]
        expected = main["headers"]["x-ms-scheduler-expected-execution-time"]
        url = urlsplit(main["path"])
        assert url.path == "/hook/templ"
        query = parse_qs(url.query)
        assert query["tag"] == [tag]
        assert _instant(query["at"][0]) == _instant(expected)
        sent = json.loads(main["body"])
        assert sent["tag"] == tag and sent["attempt"] == 0
        assert _instant(sent["scheduled"]) == _instant(expected)
        assert abs((_instant(sent["sent"]) - main["at"]).total_seconds()) < 5
        assert main["headers"]["x-collection"] == name

        assert error["path"] == "/error?attempt=0"
        assert error["headers"]["x-ms-execution-tag"] == tag
        assert error["body"] == f"{tag} of templ due {query['at'][0]}"
        history = wait_until(
            lambda: (
                len(h := api.get(api.job(name, "templ") + "/history").json()["value"]) == 2 and h
            ),
            "two history entries",
        )
        assert {e["properties"]["actionName"] for e in history} == {"MainAction", "ErrorAction"}
    finally:
        api.http.close()
        target.close()


def test_an_exponential_retry_waits_the_interval_and_carries_its_attempt(
    engine_server: ServerProcess,
) -> None:
    """The first exponential wait is retryInterval ± 10 %; each attempt's time is in history."""
    target = Target(failing=1)
    api = Api(engine_server)
    try:
        name = api.new_collection()
        policy = {
            "retryType": "Exponential",
            "retryInterval": "00:00:15",
            "maxRetryInterval": "00:05:00",
            "retryCount": 3,
        }
        response = api.put(api.job(name, "exp"), _templated_job(target.url, retryPolicy=policy))
        assert response.status_code == 201, response.text
        first, retry = wait_until(lambda: len(target.received) >= 2 and target.received, "retry")
        assert json.loads(first["body"])["attempt"] == 0
        assert json.loads(retry["body"])["attempt"] == 1
        assert retry["headers"]["x-ms-execution-tag"] == first["headers"]["x-ms-execution-tag"]
        history = wait_until(
            lambda: len(h := api.get(api.job(name, "exp") + "/history").json()["value"]) == 2 and h,
            "two history entries",
        )
        failed, succeeded = sorted(history, key=lambda e: e["properties"]["retryCount"])
        assert failed["properties"]["status"] == "Failed"
        assert succeeded["properties"]["retryCount"] == 1
        waited = _instant(succeeded["properties"]["startTime"]) - _instant(
            failed["properties"]["endTime"]
        )
        assert 13.5 <= waited.total_seconds() <= 16.5 + 1.5  # + the engine's poll slack
    finally:
        api.http.close()
        target.close()
