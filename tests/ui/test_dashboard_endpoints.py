"""The dashboard's read-only API extensions, through a real `horarium serve` (scheduler off, so
the rows written here stay as written) on SQLite and PostgreSQL: a subscription's failures
across its collections, and the scheduler processes' activity."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.migrated_databases import migrated_pg_database
from tests.server_process import ServerProcess, running_server
from tests.ui.ui_support import Api, add_execution, add_history, job_id, update_job


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    workdir: Path = tmp_path_factory.mktemp(f"dashboard-{request.param}")
    if request.param == "postgres":
        with migrated_pg_database() as url, running_server(workdir, database=url) as process:
            yield process
    else:
        with running_server(workdir) as process:
            yield process


def _entry(status: str, ended: datetime, message: str = "") -> dict[str, Any]:
    return {
        "action_name": "MainAction",
        "status": status,
        "retry_count": 0,
        "repeat_count": 1,
        "expected_execution_time": ended - timedelta(seconds=2),
        "start_time": ended - timedelta(seconds=1),
        "end_time": ended,
        "message": message or status,
    }


def _name() -> str:
    return f"jc{uuid.uuid4().hex[:8]}"


def test_failures_lists_failed_and_postponed_entries_across_collections_newest_first(
    server: ServerProcess,
) -> None:
    api, other = Api(server), Api(server)
    first, second, elsewhere = _name(), _name(), _name()
    api.new_collection(first)
    api.new_collection(second, group="rg2")
    other.new_collection(elsewhere)
    api.new_job(first, "a", "http://127.0.0.1:9/a")
    api.put(
        api.job(second, "b", group="rg2"),
        {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": "http://127.0.0.1:9/b", "method": "GET"},
                },
                "state": "Disabled",
            }
        },
    ).raise_for_status()
    other.new_job(elsewhere, "c", "http://127.0.0.1:9/c")
    now = datetime.now(UTC)
    add_history(
        server,
        job_id(server, first, "a"),
        [_entry("Completed", now), _entry("Failed", now, "500 from a")],
    )
    add_history(server, job_id(server, second, "b"), [_entry("Postponed", now, "missed b")])
    add_history(server, job_id(server, elsewhere, "c"), [_entry("Failed", now, "not yours")])

    found = api.get(api.failures())
    assert found.status_code == 200, found.text
    entries = found.json()["value"]
    assert [e["properties"]["message"] for e in entries] == ["missed b", "500 from a"]
    postponed, failed = (e["properties"] for e in entries)
    assert postponed["status"] == "Postponed" and failed["status"] == "Failed"
    assert postponed["jobId"] == api.job(second, "b", group="rg2")
    assert postponed["jobState"] == "Disabled" and failed["jobState"] == "Enabled"
    assert entries[1]["id"].startswith(api.job(first, "a") + "/history/")

    only = api.get(api.failures(), **{"$filter": "status eq Postponed"}).json()["value"]
    assert [e["properties"]["message"] for e in only] == ["missed b"]
    page = api.get(api.failures(), **{"$top": 1}).json()
    assert len(page["value"]) == 1 and "%24skip=1" in page["nextLink"].replace("$", "%24")


def test_failures_refuses_a_filter_on_completed_entries(server: ServerProcess) -> None:
    api = Api(server)
    refused = api.get(api.failures(), **{"$filter": "status eq Completed"})
    assert refused.status_code == 400
    assert "Failed, Postponed" in refused.json()["error"]["message"]


def _total(status: dict[str, Any], key: str) -> int:
    return sum(int(minute[key]) for minute in status["executionsPerMinute"])


def test_engine_counts_executions_per_minute_work_in_flight_and_the_due_backlog(
    server: ServerProcess,
) -> None:
    api = Api(server)
    name = _name()
    api.new_collection(name)
    for job in ("held", "due", "later"):
        api.new_job(name, job, f"http://127.0.0.1:9/{job}", recurrence={"frequency": "Hour"})
    held, due, later = (job_id(server, name, j) for j in ("held", "due", "later"))
    now = datetime.now(UTC)
    before = api.get("/providers/Microsoft.Scheduler/engine").json()
    owner = f"test-host:{uuid.uuid4().hex[:6]}:1"
    update_job(
        server,
        held,
        next_execution_at=now - timedelta(seconds=5),
        lease_owner=owner,
        lease_expires_at=now + timedelta(minutes=5),
    )
    update_job(server, due, next_execution_at=now - timedelta(minutes=3))
    update_job(server, later, next_execution_at=now + timedelta(hours=1))
    add_execution(server, held, lease_owner=owner, due_at=now + timedelta(minutes=5))
    add_execution(server, later, due_at=now - timedelta(seconds=30))
    add_history(
        server, later, [_entry("Completed", now), _entry("Completed", now), _entry("Failed", now)]
    )

    answer = api.get("/providers/Microsoft.Scheduler/engine")
    assert answer.status_code == 200, answer.text
    status = answer.json()
    minutes = status["executionsPerMinute"]
    assert len(minutes) == 60
    # As instants: the text of a whole minute ('…:00Z') sorts after that of a moment later
    # in it ('…:00.09Z').
    assert datetime.fromisoformat(minutes[-1]["minute"]) <= datetime.fromisoformat(status["time"])
    # Every entry of this server ended within the hour, so the window holds them all.
    grew = {k: _total(status, k) - _total(before, k) for k in ("completed", "failed", "postponed")}
    assert grew == {"completed": 2, "failed": 1, "postponed": 0}
    mine = [p for p in status["processes"] if p["owner"] == owner]
    assert mine == [
        {
            "owner": owner,
            "jobs": 1,
            "executions": 1,
            "inFlight": 2,
            "leaseExpiresAt": mine[0]["leaseExpiresAt"],
        }
    ]
    assert status["inFlight"] >= 2
    assert isinstance(status["eventLoopLag"], float) and status["eventLoopLag"] >= 0
    backlog = status["dueBacklog"]
    assert backlog["jobs"] >= 1 and backlog["executions"] >= 1
    # Compared as instants: the API trims trailing zeros from the fraction of a second.
    assert datetime.fromisoformat(backlog["oldestDueTime"]) <= now - timedelta(minutes=3)


def test_the_extensions_are_in_the_openapi_document(server: ServerProcess) -> None:
    import httpx

    document = httpx.get(server.url("/openapi.json")).json()
    failures = "/subscriptions/{subscriptionId}/providers/Microsoft.Scheduler/failures"
    assert document["paths"][failures]["get"]["operationId"] == "Failures_List"
    engine = document["paths"]["/providers/Microsoft.Scheduler/engine"]["get"]
    assert engine["operationId"] == "Engine_Get"
    assert {"FailureListResult", "EngineStatus"} <= set(document["components"]["schemas"])


def test_failures_and_engine_show_skipped_executions(server: ServerProcess) -> None:
    api = Api(server)
    name = _name()
    api.new_collection(name)
    api.new_job(name, "serial", "http://127.0.0.1:9/serial", recurrence={"frequency": "Minute"})
    before = api.get("/providers/Microsoft.Scheduler/engine").json()
    now = datetime.now(UTC)
    skipped = "Skipped: the execution expected at … fell due while the job's previous execution"
    add_history(
        server,
        job_id(server, name, "serial"),
        [_entry("Completed", now), _entry("Skipped", now, skipped), _entry("Failed", now, "500")],
    )

    entries = api.get(api.failures()).json()["value"]
    assert [e["properties"]["status"] for e in entries] == ["Failed", "Skipped"]
    only = api.get(api.failures(), **{"$filter": "status eq Skipped"}).json()["value"]
    assert [e["properties"]["message"] for e in only] == [skipped]
    history = api.get(api.job(name, "serial") + "/history", **{"$filter": "status eq Skipped"})
    assert [e["properties"]["status"] for e in history.json()["value"]] == ["Skipped"]

    status = api.get("/providers/Microsoft.Scheduler/engine").json()
    keys = ("completed", "failed", "postponed", "skipped")
    grew = {k: _total(status, k) - _total(before, k) for k in keys}
    assert grew == {"completed": 1, "failed": 1, "postponed": 0, "skipped": 1}
