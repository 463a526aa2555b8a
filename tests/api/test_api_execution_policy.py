"""`executionPolicy` and `POST …/backfill` (Horarium) through a real `horarium serve` with its
engine, on SQLite and PostgreSQL; the azure-mgmt-scheduler SDK reads such jobs and history."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from azure.mgmt.scheduler import SchedulerManagementClient
from azure.mgmt.scheduler import models as m

from horarium.model.history import HistoryEntry, render_history
from tests.api.api_client import Api, error_of, http_job
from tests.api.test_api_sdk import BearerOverHttp, KeyCredential, Target
from tests.server_process import DATABASES, ServerProcess, serving
from tests.support import wait_until


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    with serving(
        request.param, tmp_path_factory.mktemp(f"flow-{request.param}"), engine=True
    ) as process:
        yield process


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _minutely(uri: str, **policy: Any) -> dict[str, Any]:
    body = http_job(uri, recurrence={"frequency": "Minute", "interval": 1})
    body["properties"]["startTime"] = "2020-01-01T00:00:00Z"
    body["properties"]["action"]["request"]["method"] = "POST"
    if policy:
        body["properties"]["executionPolicy"] = policy
    return body


def test_execution_policy_is_stored_and_returned_with_its_defaults(api: Api) -> None:
    name = api.new_collection()
    body = _minutely("http://127.0.0.1:9/", overlap="skip", catchUpWindow="PT2H")
    body["properties"]["state"] = "Disabled"
    job = api.put(api.job(name, "p"), body).json()["properties"]
    assert job["executionPolicy"] == {
        "overlap": "Skip",
        "missed": "RunLatest",
        "catchUpWindow": "02:00:00",
    }
    patched = api.patch(
        api.job(name, "p"), {"properties": {"executionPolicy": {"missed": "RunAll"}}}
    )
    assert patched.json()["properties"]["executionPolicy"]["missed"] == "RunAll"
    assert patched.json()["properties"]["executionPolicy"]["overlap"] == "Skip"

    plain = _minutely("http://127.0.0.1:9/")
    plain["properties"]["state"] = "Disabled"
    assert "executionPolicy" not in api.put(api.job(name, "plain"), plain).json()["properties"]


@pytest.mark.parametrize(
    ("policy", "field"),
    [
        ({"overlap": "Sometimes"}, "properties.executionPolicy.overlap"),
        ({"missed": 3}, "properties.executionPolicy.missed"),
        ({"catchUpWindow": "soon"}, "properties.executionPolicy.catchUpWindow"),
        ({"catchUpWindow": "400.00:00:00"}, "properties.executionPolicy.catchUpWindow"),
        ("Skip", "properties.executionPolicy"),
    ],
)
def test_a_bad_execution_policy_is_refused_naming_the_field(
    api: Api, policy: Any, field: str
) -> None:
    name = api.new_collection()
    body = _minutely("http://127.0.0.1:9/")
    body["properties"]["executionPolicy"] = policy
    response = api.put(api.job(name, "bad"), body)
    assert response.status_code == 400
    assert error_of(response)["message"].startswith(field)
    assert api.get(api.job(name, "bad")).status_code == 404


def test_backfill_runs_each_execution_in_the_range_marked_in_history(api: Api) -> None:
    target = Target()
    try:
        name = api.new_collection()
        body = _minutely(target.url)
        body["properties"]["state"] = "Disabled"
        assert api.put(api.job(name, "bf"), body).status_code == 201
        # Enabled without running: its next execution is in the future (minute boundary).
        start = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
        conflict = api.post(
            api.job(name, "bf") + "/backfill", {"from": _iso(start), "to": _iso(start)}
        )
        assert conflict.status_code == 400 and "to:" in error_of(conflict)["message"]
        disabled = api.post(
            api.job(name, "bf") + "/backfill",
            {"from": _iso(start), "to": _iso(start + timedelta(minutes=3))},
        )
        assert disabled.status_code == 409 and error_of(disabled)["code"] == "JobStateConflict"
        body["properties"]["state"] = "Enabled"
        assert api.put(api.job(name, "bf"), body).status_code == 200

        answer = api.post(
            api.job(name, "bf") + "/backfill",
            {"from": _iso(start), "to": _iso(start + timedelta(minutes=3))},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json() == {
            "from": "2024-05-01T12:00:00Z",
            "to": "2024-05-01T12:03:00Z",
            "queued": 3,
        }
        history = wait_until(
            lambda: _backfilled(api, api.job(name, "bf"), 3), "three backfill entries"
        )
        expected = sorted(e["properties"]["expectedExecutionTime"] for e in history)
        assert [t[:19] for t in expected] == [
            "2024-05-01T12:00:00",
            "2024-05-01T12:01:00",
            "2024-05-01T12:02:00",
        ]
        assert all(e["properties"]["repeatCount"] == 0 for e in history)
        assert "status" not in history[0]["properties"]  # Completed
        assert len(target.received) >= 3  # and the job's own minute executions
    finally:
        target.close()


def test_backfill_of_more_than_a_thousand_executions_is_refused(api: Api) -> None:
    name = api.new_collection()
    assert api.put(api.job(name, "big"), _minutely("http://127.0.0.1:9/")).status_code == 201
    start = datetime(2024, 5, 1, tzinfo=UTC)
    response = api.post(
        api.job(name, "big") + "/backfill",
        {"from": _iso(start), "to": _iso(start + timedelta(minutes=1001))},
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "BackfillTooLarge" and "1000" in error["message"]
    assert api.post(api.job(name, "big") + "/backfill", {"to": _iso(start)}).status_code == 400


def test_the_openapi_document_describes_the_policy_and_backfill(api: Api) -> None:
    document = api.http.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    policy = schemas["JobProperties"]["properties"]["executionPolicy"]["properties"]
    assert policy["overlap"]["enum"] == ["Allow", "Skip", "BufferOne"]
    assert policy["missed"]["enum"] == ["RunLatest", "RunAll", "Skip"]
    assert "Skipped" in schemas["JobExecutionStatus"]["enum"]
    [path] = [p for p in document["paths"] if p.endswith("/backfill")]
    assert document["paths"][path]["post"]["operationId"] == "Jobs_Backfill"


def test_the_sdk_reads_a_job_with_an_execution_policy(server: ServerProcess) -> None:
    credential = KeyCredential(server.token)
    subscription = str(uuid.uuid4())
    client = SchedulerManagementClient(
        credential,
        subscription,
        base_url=server.base_url,
        authentication_policy=BearerOverHttp(credential),
    )
    api = Api(server, subscription)
    try:
        name = api.new_collection()
        body = _minutely("http://127.0.0.1:9/", overlap="BufferOne", missed="RunAll")
        body["properties"]["state"] = "Disabled"
        assert api.put(api.job(name, "sdk"), body).status_code == 201
        got = client.jobs.get("rg1", name, "sdk")
        assert got.properties.recurrence.frequency == "minute"
        client.jobs.patch(
            "rg1",
            name,
            "sdk",
            m.JobDefinition(properties=m.JobProperties(state="Disabled")),
        )
        stored = api.get(api.job(name, "sdk")).json()["properties"]["executionPolicy"]
        assert stored["overlap"] == "BufferOne"  # the SDK's PATCH (a merge) keeps it
    finally:
        client.close()
        api.http.close()


def test_the_sdk_reads_skipped_and_backfill_history_entries() -> None:
    """The SDK's JobExecutionStatus is an enum without Skipped: it keeps the text."""
    client = SchedulerManagementClient(KeyCredential("k"), "s", base_url="http://127.0.0.1:9")
    at = datetime(2030, 1, 1, tzinfo=UTC)
    entries = [
        HistoryEntry(1, "MainAction", "Skipped", 0, 2, at, at, at, "Skipped: …"),
        HistoryEntry(2, "MainAction", "Completed", 0, 0, at, at, at, "Backfill: Http 200"),
    ]
    for entry in entries:
        wire = render_history("/subscriptions/s/x/jobs/j", "c/j", entry)
        read = client._deserialize("JobHistoryDefinition", wire)
        assert read.properties.message == entry.message
        assert read.properties.repeat_count == entry.repeat_count
    skipped = client._deserialize(
        "JobHistoryDefinition", render_history("/subscriptions/s/x/jobs/j", "c/j", entries[0])
    )
    assert skipped.properties.status == "Skipped"
    client.close()


def _backfilled(api: Api, job: str, n: int) -> list[dict[str, Any]] | None:
    """The job's backfill history entries, once there are `n`."""
    entries = api.get(job + "/history").json()["value"]
    found = [e for e in entries if e["properties"]["message"].startswith("Backfill: ")]
    return found if len(found) >= n else None
