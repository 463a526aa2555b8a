"""Job history as the live service returned it: newest first, filters, paging.

The engine writes history; here rows are written to the real database directly (as the engine
would) so that every shape of entry is covered without waiting for executions.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.api.api_client import Api, add_history, error_of, http_job

T0 = datetime(2016, 3, 30, 20, 39, 53, 802195, tzinfo=UTC)


def _entries() -> list[dict[str, Any]]:
    def at(minutes: int, **values: Any) -> dict[str, Any]:
        start = T0 + timedelta(minutes=minutes)
        return {
            "expected_execution_time": start - timedelta(seconds=1),
            "start_time": start,
            "end_time": start + timedelta(milliseconds=250),
            "action_name": "MainAction",
            **values,
        }

    ok = "Http Action - Response from host '127.0.0.1': 'OK'"
    failed = "Http Action - Request to host '127.0.0.1' failed"
    return [
        at(0, status="Completed", repeat_count=1, message=ok),
        at(1, status="Failed", repeat_count=2, message=failed),
        at(2, status="Failed", repeat_count=2, retry_count=1, message="failed again"),
        at(
            3,
            status="Completed",
            repeat_count=2,
            action_name="ErrorAction",
            message="error action ran",
        ),
        at(4, status="Postponed", repeat_count=3, message="missed"),
    ]


def _job_with_history(api: Api) -> tuple[str, str]:
    name = api.new_collection()
    job = f"h{uuid.uuid4().hex[:10]}"
    api.put(api.job(name, job), http_job())
    add_history(api.server, job, _entries())
    return name, job


def test_history_is_newest_first_in_the_live_form(api: Api) -> None:
    name, job = _job_with_history(api)
    response = api.get(api.job(name, job) + "/history")
    assert response.status_code == 200
    body = response.json()
    assert body["nextLink"] is None
    entries = body["value"]
    assert [e["properties"]["message"] for e in entries] == [
        "missed",
        "error action ran",
        "failed again",
        "Http Action - Request to host '127.0.0.1' failed",
        "Http Action - Response from host '127.0.0.1': 'OK'",
    ]
    first_completed = entries[-1]
    history_id = first_completed["name"].split("/")[-1]
    # {DateTime.MaxValue.Ticks - start ticks}:{Int64.MaxValue - sequence}, 20 digits each
    assert re.fullmatch(r"\d{20}:\d{20}", history_id)
    assert history_id.startswith("02519429304061978049:")
    assert first_completed == {
        "id": f"{api.job(name, job)}/history/{history_id}",
        "type": "Microsoft.Scheduler/jobCollections/jobs/history",
        "name": f"{name}/{job}/{history_id}",
        "properties": {  # Completed entries carry no status
            "startTime": "2016-03-30T20:39:53.8021950Z",
            "endTime": "2016-03-30T20:39:54.0521950Z",
            "expectedExecutionTime": "2016-03-30T20:39:52.8021950Z",
            "message": "Http Action - Response from host '127.0.0.1': 'OK'",
            "retryCount": 0,
            "repeatCount": 1,
            "actionName": "MainAction",
        },
    }
    failed = entries[2]["properties"]
    assert failed["status"] == "Failed" and failed["retryCount"] == 1
    assert entries[0]["properties"]["status"] == "Postponed"
    assert entries[1]["properties"]["actionName"] == "ErrorAction"
    ids = [e["name"] for e in entries]
    assert ids == sorted(ids)  # ids sort newest first, as the live service's did


def test_history_filters_by_status(api: Api) -> None:
    name, job = _job_with_history(api)
    path = api.job(name, job) + "/history"
    failed = api.get(path, params={"$filter": "status eq Failed"}).json()["value"]
    assert [e["properties"]["message"] for e in failed] == [
        "failed again",
        "Http Action - Request to host '127.0.0.1' failed",
    ]
    completed = api.get(path, params={"$filter": "status eq 'Completed'"}).json()["value"]
    assert len(completed) == 2 and all("status" not in e["properties"] for e in completed)
    postponed = api.get(path, params={"$filter": "Status eq postponed"}).json()["value"]
    assert len(postponed) == 1
    bad = api.get(path, params={"$filter": "status eq Cancelled"})
    assert bad.status_code == 400 and "$filter" in error_of(bad)["message"]


def test_history_pages_with_top_skip_and_next_link(api: Api) -> None:
    name, job = _job_with_history(api)
    path = api.job(name, job) + "/history"
    page = api.get(path, params={"$top": 2}).json()
    messages: list[str] = []
    while True:
        messages += [e["properties"]["message"] for e in page["value"]]
        if page["nextLink"] is None:
            break
        page = api.http.get(page["nextLink"]).json()
    assert len(messages) == 5 and messages[0] == "missed"
    second = api.get(path, params={"$top": 2, "$skip": 2}).json()
    assert [e["properties"]["message"] for e in second["value"]] == messages[2:4]
    filtered = api.get(path, params={"$top": 1, "$filter": "status eq Failed"}).json()
    assert "%24filter=status" in filtered["nextLink"] or "$filter=status" in filtered["nextLink"]
    rest = api.http.get(filtered["nextLink"]).json()
    assert [e["properties"]["message"] for e in rest["value"]] == [
        "Http Action - Request to host '127.0.0.1' failed"
    ]
    assert rest["nextLink"] is None
    assert api.get(path, params={"$top": 101}).status_code == 400


def test_history_of_a_missing_job_is_404(api: Api) -> None:
    name = api.new_collection()
    response = api.get(api.job(name, "nope") + "/history")
    assert response.status_code == 404
    assert "nope" in error_of(response)["message"]
