"""`executionPolicy.deadlines` (Horarium) through a real `horarium serve` with its engine, on
SQLite and PostgreSQL. The server runs one attempt at a time (`--max-in-flight 1`), so a job
whose action hangs on a receiver on 127.0.0.1 holds the only slot: it overruns its
`finishWithin`, and a job due meanwhile is held back past its `startWithin`. Each event reaches
the collection's notification receiver exactly once; a job without deadlines behaves as before;
bad deadlines are refused naming the field."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from tests import http_receiver
from tests.api.api_client import Api, error_of, http_job
from tests.server_process import DATABASES, ServerProcess, serving
from tests.support import wait_until

SECRET = "whsec-deadlines-0123456789"
EVENTS = ["ExecutionLate", "ExecutionOverran"]


class Receiver(http_receiver.Receiver):
    """Answers 200; a path starting /hang only once `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        super().__init__(self._answer)

    def _answer(self, path: str, seen: int) -> int:
        if path.startswith("/hang"):
            self.release.wait(60)
        return 200

    def requests_to_prefix(self, prefix: str) -> list[dict[str, Any]]:
        return [r for r in list(self.received) if r["path"].startswith(prefix)]

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(r["body"]) for r in self.requests_to("/notify")]

    def close(self) -> None:
        self.release.set()
        super().close()


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    env = {"HORARIUM_MAX_IN_FLIGHT": "1", "HORARIUM_POLL_INTERVAL": "0.2"}
    workdir = tmp_path_factory.mktemp(f"deadlines-{request.param}")
    with serving(request.param, workdir, engine=True, env=env) as process:
        yield process


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _job(uri: str, **deadlines: str) -> dict[str, Any]:
    """A one-time job run at once, with a single attempt."""
    body = http_job(uri)
    body["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    if deadlines:
        body["properties"]["executionPolicy"] = {"deadlines": deadlines}
    return body


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _of(receiver: Receiver, event: str, job: str) -> list[dict[str, Any]]:
    return [e for e in receiver.events() if e["event"] == event and e["job"] == job]


def _metric(api: Api, name: str) -> float:
    for line in api.http.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} is not in /metrics")


def test_an_overrun_and_a_held_back_start_are_each_notified_once(
    api: Api, receiver: Receiver
) -> None:
    hook = {"events": EVENTS, "uri": receiver.base_url + "/notify", "secret": SECRET}
    name = api.new_collection(notifications=[hook])
    late_before = _metric(api, "horarium_executions_late_total")
    overran_before = _metric(api, "horarium_executions_overran_total")
    base = receiver.base_url

    hanging = _job(base + "/hang", startWithin="00:00:30", finishWithin="00:00:01")
    put = api.put(api.job(name, "hang"), hanging)
    assert put.status_code == 201, put.text
    shown = put.json()["properties"]["executionPolicy"]["deadlines"]
    assert shown == {"startWithin": "00:00:30", "finishWithin": "00:00:01"}
    wait_until(lambda: receiver.requests_to("/hang"), "the hanging attempt to hold the slot")
    held = api.put(api.job(name, "held"), _job(base + "/held", startWithin="00:00:01"))
    plain = api.put(api.job(name, "plain"), _job(base + "/plain"))
    assert held.status_code == plain.status_code == 201
    assert "executionPolicy" not in plain.json()["properties"]

    wait_until(lambda: _of(receiver, "ExecutionOverran", "hang"), "ExecutionOverran")
    wait_until(lambda: _of(receiver, "ExecutionLate", "held"), "ExecutionLate")
    assert not receiver.requests_to("/held"), "the held job waits for the slot"
    receiver.release.set()
    wait_until(lambda: receiver.requests_to("/held") and receiver.requests_to("/plain"), "runs")
    for job in ("hang", "held", "plain"):
        wait_until(
            lambda job=job: (
                api.get(api.job(name, job)).json()["properties"]["state"].lower() == "completed"
            ),
            f"{job} to complete",
        )

    # A later overrun, raised by a later pass of the engine's look: by then any second event
    # of the jobs above would have been sent too.
    receiver.release.clear()
    later = _job(base + "/hang-later", finishWithin="00:00:01")
    assert api.put(api.job(name, "later"), later).status_code == 201
    wait_until(lambda: _of(receiver, "ExecutionOverran", "later"), "the later ExecutionOverran")
    receiver.release.set()

    events = receiver.events()
    assert sorted((e["event"], e["job"]) for e in events) == [
        ("ExecutionLate", "held"),
        ("ExecutionOverran", "hang"),
        ("ExecutionOverran", "later"),
    ]
    [overran] = _of(receiver, "ExecutionOverran", "hang")
    start = _instant(overran["execution"]["startTime"])
    assert _instant(overran["time"]) >= start + timedelta(seconds=1)
    assert overran["deadlines"] == {"startWithin": "00:00:30", "finishWithin": "00:00:01"}
    assert overran["jobId"].endswith(f"/jobCollections/{name}/jobs/hang")
    [late] = _of(receiver, "ExecutionLate", "held")
    expected = _instant(late["execution"]["expectedExecutionTime"])
    assert late["execution"]["startTime"] is None  # raised while it waited
    assert _instant(late["time"]) >= expected + timedelta(seconds=1)
    assert late["deadlines"] == {"startWithin": "00:00:01"}
    history = api.get(api.job(name, "held") + "/history").json()["value"]
    [entry] = history
    assert _instant(entry["properties"]["startTime"]) > expected + timedelta(seconds=1)
    assert _metric(api, "horarium_executions_late_total") == late_before + 1
    assert _metric(api, "horarium_executions_overran_total") == overran_before + 2


def test_deadlines_are_validated_naming_the_field(api: Api) -> None:
    name = api.new_collection()
    where = "properties.executionPolicy.deadlines"
    for deadlines, field, rule in [
        ({"startWithin": "00:00:00"}, f"{where}.startWithin", "more than 0"),
        ({"finishWithin": "8.00:00:00"}, f"{where}.finishWithin", "at most 7.00:00:00"),
        ({"finishWithin": "soon"}, f"{where}.finishWithin", "'soon'"),
        ({}, where, "startWithin, finishWithin or both"),
        ("PT1M", where, "object"),
    ]:
        body = http_job(executionPolicy={"deadlines": deadlines})
        response = api.put(api.job(name, f"j{uuid.uuid4().hex[:6]}"), body)
        assert response.status_code == 400, response.text
        message = error_of(response)["message"]
        assert field in message and rule in message, message
    body = http_job(executionPolicy={"deadlines": {"startwithin": "PT5M"}})
    response = api.put(api.job(name, "iso"), body)
    assert response.status_code == 201, response.text
    assert response.json()["properties"]["executionPolicy"]["deadlines"] == {
        "startWithin": "00:05:00"
    }
    # Removed again by a PUT without them.
    response = api.put(api.job(name, "iso"), http_job())
    assert "executionPolicy" not in response.json()["properties"]


def test_openapi_documents_the_deadlines_and_their_events(api: Api) -> None:
    schemas = api.http.get("/openapi.json").json()["components"]["schemas"]
    policy = schemas["JobProperties"]["properties"]["executionPolicy"]["properties"]
    assert set(policy["deadlines"]["properties"]) == {"startWithin", "finishWithin"}
    events = schemas["JobCollectionNotification"]["properties"]["events"]["items"]["enum"]
    assert {"ExecutionLate", "ExecutionOverran"} <= set(events)
