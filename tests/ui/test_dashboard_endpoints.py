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


def test_outcomes_lists_every_job_with_its_newest_entries_in_one_read(
    server: ServerProcess,
) -> None:
    api = Api(server)
    name = _name()
    api.new_collection(name)
    for job in ("busy", "idle"):
        api.new_job(name, job, f"http://127.0.0.1:9/{job}")
    now = datetime.now(UTC)
    long = "x" * 400
    entries = [_entry("Completed", now, f"run {i}") for i in range(5)]
    entries += [_entry("Failed", now, long)]
    add_history(server, job_id(server, name, "busy"), entries)
    path = api.collection(name) + "/outcomes"

    answer = api.get(path, count=3)
    assert answer.status_code == 200, answer.text
    value = answer.json()["value"]
    assert [j["name"] for j in value] == [f"{name}/busy", f"{name}/idle"]
    busy, idle = value
    assert busy["id"] == api.job(name, "busy") and idle["outcomes"] == []
    newest = [e["properties"] for e in busy["outcomes"]]
    assert [e.get("status", "Completed") for e in newest] == ["Failed", "Completed", "Completed"]
    assert [e["message"] for e in newest[1:]] == ["run 4", "run 3"]
    assert len(newest[0]["message"]) == 300 and newest[0]["message"].endswith("…")
    # The default is ten entries per job.
    assert len(api.get(path).json()["value"][0]["outcomes"]) == 6

    for bad in (0, 21):
        refused = api.get(path, count=bad)
        assert refused.status_code == 400, refused.text
        assert "count" in refused.json()["error"]["message"]
    assert api.get(api.collection(_name()) + "/outcomes").status_code == 404
    assert Api(server).get(path.replace(api.subscription, "sub-other")).status_code == 404


def test_the_backlog_leaves_out_work_a_disabled_collection_holds(server: ServerProcess) -> None:
    api = Api(server)
    name = _name()
    api.new_collection(name)
    api.new_job(name, "held", "http://127.0.0.1:9/held", recurrence={"frequency": "Hour"})
    assert api.post(api.collection(name) + "/disable").status_code == 200
    row = job_id(server, name, "held")
    before = api.get("/providers/Microsoft.Scheduler/engine").json()["dueBacklog"]
    now = datetime.now(UTC)
    add_execution(server, row, kind="scheduled", attempt=1, due_at=now - timedelta(minutes=3))

    after = api.get("/providers/Microsoft.Scheduler/engine").json()["dueBacklog"]
    assert after["executions"] == before["executions"]
    assert after["oldestDueTime"] == before["oldestDueTime"]
    held, was = after["heldByCollections"], before["heldByCollections"]
    assert held["executions"] == was["executions"] + 1
    assert held["jobs"] == was["jobs"]


def test_the_outcomes_read_is_in_the_openapi_document(server: ServerProcess) -> None:
    import httpx

    document = httpx.get(server.url("/openapi.json")).json()
    outcomes = (
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}"
        "/providers/Microsoft.Scheduler/jobCollections/{jobCollectionName}/outcomes"
    )
    get = document["paths"][outcomes]["get"]
    assert get["operationId"] == "JobCollections_ListOutcomes"
    count = next(p for p in get["parameters"] if p["name"] == "count")
    assert count["schema"]["maximum"] == 20
    backlog = document["components"]["schemas"]["EngineStatus"]["properties"]["dueBacklog"]
    assert "heldByCollections" in backlog["properties"]
    assert "JobOutcomesListResult" in document["components"]["schemas"]


def test_a_failure_says_whether_it_was_the_last_attempt_its_policy_allows(
    server: ServerProcess,
) -> None:
    api = Api(server)
    name = _name()
    api.new_collection(name)
    policies = {
        "once-more": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 1},
        "never": {"retryType": "None"},
    }
    for job, policy in policies.items():
        action = {"type": "Http", "request": {"uri": "http://127.0.0.1:9/x", "method": "GET"}}
        body = {"properties": {"action": {**action, "retryPolicy": policy}}}
        assert api.put(api.job(name, job), body).status_code == 201
    now = datetime.now(UTC)
    retried = {**_entry("Failed", now, "the retry"), "retry_count": 1}
    add_history(
        server,
        job_id(server, name, "once-more"),
        [_entry("Failed", now, "the first"), retried, _entry("Postponed", now, "missed")],
    )
    add_history(server, job_id(server, name, "never"), [_entry("Failed", now, "only try")])

    entries = {e["properties"]["message"]: e["properties"] for e in
               api.get(api.failures()).json()["value"]}  # fmt: skip
    assert entries["the first"]["finalAttempt"] is False
    assert entries["the retry"]["finalAttempt"] is True
    assert entries["only try"]["finalAttempt"] is True
    assert "finalAttempt" not in entries["missed"]
