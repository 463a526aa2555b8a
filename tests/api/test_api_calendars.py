"""Beyond Azure: exclusion calendars of a collection, the jobs that list them, and their upcoming
executions, through the real server on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.mgmt.scheduler import SchedulerManagementClient

from tests.api.api_client import Api, error_of, http_job

WEEKENDS = {"properties": {"weekends": True}}
ICAL = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
    "BEGIN:VEVENT\r\nUID:closing@test\r\nDTSTART;VALUE=DATE:20310106\r\n"
    "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3\r\nSUMMARY:closed on Mondays\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n"
)


def _calendar(api: Api, collection: str, name: str) -> str:
    return api.collection(collection) + f"/calendars/{name}"


def _daily(**recurrence: Any) -> dict[str, Any]:
    """Every day at 09:00 New York time from Friday 2031-01-03."""
    return http_job(
        startTime="2031-01-03T09:00:00",
        recurrence={"frequency": "Day", "timeZone": "America/New_York", **recurrence},
    )


def _upcoming(api: Api, collection: str, job: str, count: int) -> list[dict[str, Any]]:
    response = api.get(api.job(collection, job) + "/upcoming", params={"count": count})
    assert response.status_code == 200, response.text
    return list(response.json()["value"])


def test_a_calendar_is_created_read_listed_replaced_and_deleted(api: Api) -> None:
    name = api.new_collection()
    path = _calendar(api, name, "Business")
    body = {"properties": {"dates": ["2031-12-24", "2031-01-01", "2031-12-24"], "weekends": True}}
    created = api.put(path, body)
    assert created.status_code == 201, created.text
    assert created.json() == {
        "id": f"{api.collection(name)}/calendars/Business",
        "type": "Microsoft.Scheduler/jobCollections/calendars",
        "name": f"{name}/Business",
        "properties": {"dates": ["2031-01-01", "2031-12-24"], "weekends": True},
    }
    assert api.get(_calendar(api, name, "business")).json() == created.json()
    replaced = api.put(path, {"properties": {"holidays": {"country": "us", "subdivision": "NY"}}})
    assert replaced.status_code == 200
    assert replaced.json()["properties"] == {"holidays": {"country": "US", "subdivision": "NY"}}
    listed = api.get(api.collection(name) + "/calendars").json()
    assert [c["name"] for c in listed["value"]] == [f"{name}/Business"]
    assert api.delete(path).status_code == 200
    assert api.get(path).status_code == 404
    assert api.get(api.collection(name) + "/calendars").json()["value"] == []


@pytest.mark.parametrize(
    ("properties", "field"),
    [
        ({"dates": ["2031-02-30"]}, "properties.dates[0]"),
        ({"dates": ["2031-01-01"] * 1001}, "properties.dates"),
        ({"ranges": [{"start": "2031-01-02", "end": "2031-01-01"}]}, "properties.ranges[0].end"),
        ({"ranges": [{"start": "2031-01-02"}]}, "properties.ranges[0].end"),
        ({"holidays": {"country": "XX"}}, "properties.holidays.country"),
        ({"holidays": {"country": "US", "subdivision": "ZZ"}}, "properties.holidays.subdivision"),
        ({"ical": "BEGIN:VCALENDAR\r\nthis is not ical"}, "properties.ical"),
        ({"ical": "BEGIN:VCALENDAR\r\n" + "X" * 1_000_001}, "properties.ical"),
        ({"weekends": "yes"}, "properties.weekends"),
        ({"weekdays": True}, "properties.weekdays"),
    ],
)
def test_an_invalid_calendar_is_400_naming_the_field(
    api: Api, properties: dict[str, Any], field: str
) -> None:
    name = api.new_collection()
    response = api.put(_calendar(api, name, "bad"), {"properties": properties})
    assert response.status_code == 400, response.text
    assert error_of(response)["message"].startswith(field + ":")
    assert api.get(_calendar(api, name, "bad")).status_code == 404  # nothing stored


def test_a_job_listing_an_unknown_calendar_is_400(api: Api) -> None:
    name = api.new_collection()
    response = api.put(api.job(name, "j"), _daily(excludeCalendars=["nope"]))
    assert response.status_code == 400
    assert error_of(response)["message"].startswith("properties.recurrence.excludeCalendars[0]:")
    bad_mode = api.put(api.job(name, "j"), _daily(onExcluded="Tomorrow"))
    assert bad_mode.status_code == 400
    assert error_of(bad_mode)["message"].startswith("properties.recurrence.onExcluded:")


def test_a_job_skips_excluded_days_and_upcoming_marks_them(api: Api) -> None:
    name = api.new_collection()
    assert api.put(_calendar(api, name, "weekends"), WEEKENDS).status_code == 201
    response = api.put(api.job(name, "daily"), _daily(excludeCalendars=["Weekends"]))
    assert response.status_code == 201, response.text
    properties = response.json()["properties"]
    assert properties["recurrence"]["excludeCalendars"] == ["Weekends"]
    assert "resolvedCalendars" not in response.text  # the internal copy is never shown
    assert properties["status"]["nextExecutionTime"] == "2031-01-03T14:00:00Z"
    listing = _upcoming(api, name, "daily", 3)
    assert [
        (e["executionTime"], e["repeatCount"], e.get("skippedByCalendar")) for e in listing
    ] == [
        ("2031-01-03T14:00:00Z", 1, None),
        ("2031-01-04T14:00:00Z", None, "weekends"),
        ("2031-01-05T14:00:00Z", None, "weekends"),
        ("2031-01-06T14:00:00Z", 2, None),
        ("2031-01-07T14:00:00Z", 3, None),
    ]


def test_the_last_business_day_of_the_month_at_18(api: Api) -> None:
    name = api.new_collection()
    business = {
        "properties": {"weekends": True, "holidays": {"country": "US", "subdivision": "NY"}}
    }
    assert api.put(_calendar(api, name, "business"), business).status_code == 201
    job = http_job(
        startTime="2031-01-01T00:00:00",
        recurrence={
            "frequency": "Month",
            "timeZone": "America/New_York",
            "schedule": {"monthDays": [-1], "hours": [18], "minutes": [0]},
            "excludeCalendars": ["business"],
            "onExcluded": "PreviousBusinessDay",
        },
    )
    assert api.put(api.job(name, "close"), job).status_code == 201
    listing = _upcoming(api, name, "close", 4)
    assert [e["localTime"] for e in listing] == [
        "2031-01-31T18:00:00-05:00",  # a Friday
        "2031-02-28T18:00:00-05:00",  # a Friday
        "2031-03-31T18:00:00-04:00",  # a Monday
        "2031-04-30T18:00:00-04:00",  # a Wednesday
    ]
    may = _upcoming(api, name, "close", 5)[4]  # May 31 2031 is a Saturday
    assert may["localTime"] == "2031-05-30T18:00:00-04:00"
    assert may["movedByCalendar"] == "business"
    assert may["scheduledExecutionTimes"] == ["2031-05-31T22:00:00Z"]


def test_an_ical_calendar_moves_executions_to_the_next_business_day(api: Api) -> None:
    name = api.new_collection()
    assert (
        api.put(_calendar(api, name, "closed"), {"properties": {"ical": ICAL}}).status_code == 201
    )
    job = _daily(excludeCalendars=["closed"], onExcluded="nextbusinessday")
    created = api.put(api.job(name, "daily"), job).json()["properties"]
    assert created["recurrence"]["onExcluded"] == "NextBusinessDay"
    listing = _upcoming(api, name, "daily", 4)
    assert [e["localTime"][:10] for e in listing] == [
        "2031-01-03",
        "2031-01-04",
        "2031-01-05",
        "2031-01-07",  # Monday 6th (closed) runs on Tuesday with Tuesday's own: once
    ]
    assert listing[3]["movedByCalendar"] == "closed"
    assert listing[3]["scheduledExecutionTimes"] == ["2031-01-06T14:00:00Z", "2031-01-07T14:00:00Z"]


def test_changing_a_calendar_reschedules_the_jobs_that_list_it(api: Api) -> None:
    name = api.new_collection()
    path = _calendar(api, name, "closures")
    assert api.put(path, {"properties": {"dates": ["2031-06-01"]}}).status_code == 201
    assert api.put(api.job(name, "daily"), _daily(excludeCalendars=["closures"])).status_code == 201
    assert api.put(api.job(name, "other"), _daily()).status_code == 201
    before = api.get(api.job(name, "daily")).json()["properties"]["status"]
    assert before["nextExecutionTime"] == "2031-01-03T14:00:00Z"
    closed = {"properties": {"ranges": [{"start": "2031-01-01", "end": "2031-01-05T06:00:00"}]}}
    assert api.put(path, closed).status_code == 200
    after = api.get(api.job(name, "daily")).json()["properties"]["status"]
    assert after["nextExecutionTime"] == "2031-01-05T14:00:00Z"  # 3rd and 4th excluded
    other = api.get(api.job(name, "other")).json()["properties"]["status"]
    assert other["nextExecutionTime"] == "2031-01-03T14:00:00Z"  # lists no calendar
    listing = _upcoming(api, name, "daily", 1)
    assert listing[0]["executionTime"] == "2031-01-05T14:00:00Z"


def test_a_calendar_in_use_cannot_be_deleted(api: Api) -> None:
    name = api.new_collection()
    path = _calendar(api, name, "weekends")
    assert api.put(path, WEEKENDS).status_code == 201
    assert api.put(api.job(name, "daily"), _daily(excludeCalendars=["weekends"])).status_code == 201
    refused = api.delete(path)
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "CalendarInUse"
    assert "'daily'" in error_of(refused)["message"]
    patch = {"properties": {"recurrence": {"excludeCalendars": None}}}
    patched = api.patch(api.job(name, "daily"), patch)
    assert patched.status_code == 200, patched.text
    assert "excludeCalendars" not in patched.json()["properties"]["recurrence"]
    assert api.delete(path).status_code == 200


def test_the_preview_of_an_unsaved_job_honours_its_calendars(api: Api) -> None:
    name = api.new_collection()
    assert api.put(_calendar(api, name, "weekends"), WEEKENDS).status_code == 201
    response = api.post(
        api.job(name, "draft") + "/upcoming",
        _daily(excludeCalendars=["weekends"], onExcluded="PreviousBusinessDay"),
        params={"count": 2},
    )
    assert response.status_code == 200, response.text
    value = response.json()["value"]
    assert [e["executionTime"] for e in value] == ["2031-01-03T14:00:00Z", "2031-01-06T14:00:00Z"]
    assert value[0]["scheduledExecutionTimes"] == [
        "2031-01-03T14:00:00Z",
        "2031-01-04T14:00:00Z",
        "2031-01-05T14:00:00Z",
    ]


def test_excluded_dates_lists_the_days_and_why(api: Api) -> None:
    name = api.new_collection()
    body = {
        "properties": {
            "dates": ["2031-01-02"],
            "holidays": {"country": "US"},
            "weekends": True,
            "ranges": [{"start": "2031-01-08T12:00:00", "end": "2031-01-08T13:30:00"}],
            "ical": ICAL,
        }
    }
    assert api.put(_calendar(api, name, "closures"), body).status_code == 201
    path = _calendar(api, name, "Closures") + "/excludedDates"
    response = api.get(
        path, params={"from": "2031-01-01", "to": "2031-01-09", "timeZone": "America/New_York"}
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["calendar"], answer["from"], answer["to"], answer["timeZone"]) == (
        "closures",
        "2031-01-01",
        "2031-01-09",
        "America/New_York",
    )
    days = {d["date"]: d for d in answer["value"]}
    assert list(days) == [
        "2031-01-01",
        "2031-01-02",
        "2031-01-04",
        "2031-01-05",
        "2031-01-06",
        "2031-01-08",
    ]
    assert days["2031-01-01"]["reasons"] == [{"kind": "holiday", "detail": "New Year's Day"}]
    assert days["2031-01-04"]["reasons"] == [{"kind": "weekend", "detail": "Saturday"}]
    assert days["2031-01-06"]["reasons"] == [{"kind": "event", "detail": "closed on Mondays"}]
    assert all(d["wholeDay"] and "spans" not in d for d in answer["value"][:-1])
    partly = days["2031-01-08"]
    assert partly["wholeDay"] is False
    assert partly["spans"] == [{"start": "2031-01-08T17:00:00Z", "end": "2031-01-08T18:30:00Z"}]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2031-01-01", "to": "2032-01-03"}, "to"),
        ({"from": "2031-01-05", "to": "2031-01-01"}, "to"),
        ({"from": "Monday"}, "from"),
        ({"from": "1066-10-14"}, "from"),
        ({"from": "2031-01-01", "to": "9999-12-31"}, "to"),
        ({"timeZone": "Mars/Olympus"}, "timeZone"),
    ],
)
def test_excluded_dates_are_bounded_and_bad_values_name_their_field(
    api: Api, params: dict[str, str], field: str
) -> None:
    name = api.new_collection()
    assert api.put(_calendar(api, name, "weekends"), WEEKENDS).status_code == 201
    response = api.get(_calendar(api, name, "weekends") + "/excludedDates", params=params)
    assert response.status_code == 400, response.text
    assert error_of(response)["message"].startswith(f"{field}: ")


def test_a_calendar_preview_lists_what_an_edit_skips_and_releases(api: Api) -> None:
    name = api.new_collection()
    path = _calendar(api, name, "closures")
    assert api.put(path, {"properties": {"dates": ["2031-01-07"]}}).status_code == 201
    assert api.put(api.job(name, "daily"), _daily(excludeCalendars=["closures"])).status_code == 201
    assert api.put(api.job(name, "other"), _daily()).status_code == 201
    edited = {"properties": {"weekends": True, "dates": ["2031-01-09"]}}
    window = {"from": "2031-01-01T00:00:00", "to": "2031-01-13T00:00:00"}
    response = api.post(path + "/upcoming", edited, params=window)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert [d["date"] for d in answer["excludedDates"]] == [
        "2031-01-04",
        "2031-01-05",
        "2031-01-09",
        "2031-01-11",
        "2031-01-12",
    ]
    assert [j["name"] for j in answer["jobs"]] == ["daily"]  # "other" lists no calendar
    marks = [
        (e["scheduledExecutionTime"][:10], e["change"], e.get("skippedByCalendar"))
        for e in answer["jobs"][0]["executions"]
    ]
    assert marks == [
        ("2031-01-04", "new", "closures"),
        ("2031-01-05", "new", "closures"),
        ("2031-01-07", "released", "closures"),
        ("2031-01-09", "new", "closures"),
        ("2031-01-11", "new", "closures"),
        ("2031-01-12", "new", "closures"),
    ]
    stored = api.get(path).json()["properties"]
    assert stored == {"dates": ["2031-01-07"]}  # nothing stored
    moved = {"properties": {"dates": ["2031-01-07"]}}
    job = _daily(excludeCalendars=["closures"], onExcluded="NextBusinessDay")
    assert api.put(api.job(name, "daily"), job).status_code == 200
    same = api.post(path + "/upcoming", moved, params=window).json()["jobs"][0]["executions"]
    assert [(e["executionTime"], e["change"], e["movedByCalendar"]) for e in same] == [
        ("2031-01-08T14:00:00Z", "same", "closures")
    ]


def test_a_calendar_preview_validates_its_body_and_window(api: Api) -> None:
    name = api.new_collection()
    path = _calendar(api, name, "draft") + "/upcoming"
    bad = api.post(path, {"properties": {"dates": ["2031-02-30"]}})
    assert bad.status_code == 400
    assert error_of(bad)["message"].startswith("properties.dates[0]: ")
    long = api.post(
        path, WEEKENDS, params={"from": "2031-01-01T00:00:00", "to": "2031-05-01T00:00:00"}
    )
    assert long.status_code == 400
    assert "longer than 92 days" in error_of(long)["message"]
    fresh = api.post(path, WEEKENDS)  # a calendar not saved yet: no job lists it
    assert fresh.status_code == 200, fresh.text
    assert fresh.json()["jobs"] == []
    assert len(fresh.json()["excludedDates"]) >= 8  # 31 days hold at least 4 weekends
    assert api.get(_calendar(api, name, "draft")).status_code == 404


def test_openapi_documents_the_calendar_days_and_preview(api: Api) -> None:
    document = api.http.get("/openapi.json").json()
    calendar = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers"
    calendar += "/Microsoft.Scheduler/jobCollections/{jobCollectionName}/calendars/{calendarName}"
    days = document["paths"][calendar + "/excludedDates"]["get"]
    assert days["operationId"] == "Calendars_ListExcludedDates"
    assert {p["name"] for p in days["parameters"]} >= {"from", "to", "timeZone"}
    preview = document["paths"][calendar + "/upcoming"]["post"]
    assert preview["operationId"] == "Calendars_PreviewUpcoming"
    schemas = document["components"]["schemas"]
    assert {"CalendarExcludedDates", "CalendarPreview", "CalendarPreviewJob"} <= set(schemas)


class _NoToken:
    """A TokenCredential the SDK requires; the key goes in `_Bearer` (plain http)."""

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("unused", int(time.time()) + 3600)


class _Bearer(SansIOHTTPPolicy[Any, Any]):
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers

    def on_request(self, request: Any) -> None:
        request.http_request.headers.update(self.headers)


def test_the_sdk_reads_a_job_that_lists_calendars(api: Api) -> None:
    name = api.new_collection()
    assert api.put(_calendar(api, name, "weekends"), WEEKENDS).status_code == 201
    assert api.put(api.job(name, "daily"), _daily(excludeCalendars=["weekends"])).status_code == 201
    client = SchedulerManagementClient(
        credential=_NoToken(),
        subscription_id=api.subscription,
        base_url=api.server.base_url,
        authentication_policy=_Bearer(api.server.auth_headers()),
    )
    job = client.jobs.get("rg1", name, "daily")
    assert job.properties.recurrence.frequency == "day"  # as the live service wrote it
    assert job.properties.status.next_execution_time is not None
    assert [j.name for j in client.jobs.list("rg1", name)] == [f"{name}/daily"]
