"""Beyond Azure: `recurrence.cron` and `recurrence.jitter` through the API: stored and read
back, validated with 400s naming the field (nothing stored), held to plan quotas, shown by
`upcoming`, and readable by the azure-mgmt-scheduler SDK."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from azure.mgmt.scheduler import SchedulerManagementClient

from tests.api.api_client import Api, error_of, http_job
from tests.api.test_api_sdk import BearerOverHttp, KeyCredential
from tests.server_process import ServerProcess

WEEKDAYS_NINE = {"cron": "0 9 * * MON-FRI", "timeZone": "Europe/Berlin"}


def test_a_cron_job_is_stored_scheduled_and_read_back(api: Api) -> None:
    name = api.new_collection()
    body = http_job(startTime="2031-03-28T00:00:00Z", recurrence=WEEKDAYS_NINE)
    response = api.put(api.job(name, "nine"), body)
    assert response.status_code == 201, response.text
    properties = response.json()["properties"]
    assert properties["recurrence"] == WEEKDAYS_NINE
    # Friday 2031-03-28 09:00 CET, then Monday 03-31 09:00 CEST (DST began on Sunday).
    assert properties["status"]["nextExecutionTime"] == "2031-03-28T08:00:00Z"
    listing = api.get(api.job(name, "nine") + "/upcoming", params={"count": 2}).json()
    assert [e["executionTime"] for e in listing["value"]] == [
        "2031-03-28T08:00:00Z",
        "2031-03-31T07:00:00Z",
    ]
    assert [e["jitterOffset"] for e in listing["value"]] == ["00:00:00", "00:00:00"]
    fetched = api.get(api.job(name, "nine")).json()["properties"]
    assert fetched["recurrence"] == WEEKDAYS_NINE


@pytest.mark.parametrize(
    ("recurrence", "message"),
    [
        (
            {"cron": "0 9 * * *", "frequency": "Day"},
            "properties.recurrence.frequency: must be absent with recurrence.cron",
        ),
        (
            {"cron": "0 9 * * *", "interval": 1},
            "properties.recurrence.interval: must be absent with recurrence.cron",
        ),
        (
            {"cron": "0 9 * * *", "schedule": {"hours": [9]}},
            "properties.recurrence.schedule: must be absent with recurrence.cron",
        ),
        ({"cron": "0 9 * *"}, "properties.recurrence.cron: '0 9 * *' has 4 fields"),
        ({"cron": "0 25 * * *"}, "properties.recurrence.cron: hour field '25': 25 is not in"),
        ({"cron": "0 0 30 2 *"}, "properties.recurrence.cron: '0 0 30 2 *' never matches"),
        ({"cron": 7}, "properties.recurrence.cron: must be a string"),
        ({"cron": "@hourly", "jitter": "soon"}, "properties.recurrence.jitter: 'soon' is neither"),
        (
            {"cron": "*/5 * * * *", "jitter": "00:06:00"},
            "properties.recurrence.jitter: 0:06:00 is longer than the shortest gap between two"
            " runs (0:05:00)",
        ),
        (
            {"frequency": "Hour", "jitter": "PT2H"},
            "properties.recurrence.jitter: 2:00:00 is longer than the shortest gap",
        ),
    ],
)
def test_invalid_cron_or_jitter_is_a_400_naming_the_field(
    api: Api, recurrence: dict[str, Any], message: str
) -> None:
    name = api.new_collection()
    response = api.put(api.job(name, "bad"), http_job(recurrence=recurrence))
    assert response.status_code == 400, response.text
    assert message in error_of(response)["message"]
    assert api.get(api.job(name, "bad")).status_code == 404  # nothing stored


def test_a_free_collection_refuses_a_cron_more_frequent_than_hourly(api: Api) -> None:
    name = api.new_collection("Free")
    for often in ("*/5 * * * *", "0,30 9 * * *", "0-1 * * * *"):
        response = api.put(api.job(name, "often"), http_job(recurrence={"cron": often}))
        assert response.status_code == 409, often
        message = error_of(response)["message"]
        assert "at most every 1 hour" in message and "Free plan" in message
    for fine in ("@hourly", "0 9,10 * * *", "0 9 * * MON"):
        response = api.put(api.job(name, "fine"), http_job(recurrence={"cron": fine}))
        assert response.status_code in (200, 201), (fine, response.text)


def test_jittered_upcoming_shows_the_real_instants_and_marks_them(api: Api) -> None:
    name = api.new_collection()
    recurrence = {"cron": "0 * * * *", "jitter": "PT10M"}
    body = http_job(startTime="2031-01-01T00:00:00Z", recurrence=recurrence)
    stored = api.put(api.job(name, "spread"), body).json()["properties"]
    assert stored["recurrence"] == {"cron": "0 * * * *", "jitter": "00:10:00"}  # TimeSpan
    listing = api.get(api.job(name, "spread") + "/upcoming", params={"count": 5}).json()
    entries = listing["value"]
    assert stored["status"]["nextExecutionTime"] == entries[0]["executionTime"]
    assert [e["scheduledExecutionTime"] for e in entries] == [
        f"2031-01-01T0{h}:00:00Z" for h in range(5)
    ]
    offsets = [e["jitterOffset"] for e in entries]
    assert all("00:00:00" <= o < "00:10:00" for o in offsets)
    assert len(set(offsets)) > 1  # a different offset for each execution
    for entry in entries:
        minutes, seconds = entry["jitterOffset"].split(":")[1:]
        assert entry["executionTime"] == (
            f"{entry['scheduledExecutionTime'][:14]}{minutes}:{seconds}Z"
        )
    # The unsaved preview of the same definition, as if created now, is jittered the same way.
    draft = api.post(api.job(name, "draft") + "/upcoming", body, params={"count": 2}).json()
    assert [e["scheduledExecutionTime"] for e in draft["value"]] == [
        "2031-01-01T00:00:00Z",
        "2031-01-01T01:00:00Z",
    ]


def test_the_sdk_reads_a_job_with_cron_and_jitter(server: ServerProcess) -> None:
    api = Api(server)
    credential = KeyCredential(server.token)
    client = SchedulerManagementClient(
        credential,
        api.subscription,
        base_url=server.base_url,
        authentication_policy=BearerOverHttp(credential),
    )
    try:
        name = api.new_collection()
        body = http_job(recurrence={"cron": "*/15 * * * *", "jitter": "PT1M", "count": 3})
        assert api.put(api.job(name, "sdk"), body).status_code == 201
        job = client.jobs.get("rg1", name, "sdk")
        assert job.name == f"{name}/sdk"
        assert job.properties.recurrence.count == 3
        assert job.properties.recurrence.frequency is None
        assert job.properties.status.next_execution_time is not None
        listed = list(client.jobs.list("rg1", name))
        assert [j.name for j in listed] == [f"{name}/sdk"]
    finally:
        client.close()
        api.http.close()


def test_an_azure_job_without_the_extensions_renders_as_before(api: Api) -> None:
    name = api.new_collection()
    recurrence = {"frequency": "Day", "interval": 1, "schedule": {"hours": [5], "minutes": [0]}}
    body = http_job(startTime="2031-01-01T00:00:00Z", recurrence=recurrence)
    stored = api.put(api.job(name, f"plain{uuid.uuid4().hex[:4]}"), body).json()["properties"]
    assert stored["recurrence"] == {
        "frequency": "day",
        "interval": 1,
        "schedule": {"hours": [5], "minutes": [0]},
    }
    assert stored["status"]["nextExecutionTime"] == "2031-01-01T05:00:00Z"
