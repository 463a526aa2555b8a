"""Beyond Azure: a collection's timeline (`GET …/jobCollections/{jc}/upcoming?from&to`) and a
job's schedule in words (`$expand=scheduleDescription`), through the real server on SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.api.api_client import Api, error_of, http_job

# Sunday 2031-03-09 is the US spring-forward day: 02:30 New York does not exist.
FROM, TO = "2031-03-07T00:00:00Z", "2031-03-12T00:00:00Z"
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _day(hour: int, minute: int = 0, day: int = 0) -> datetime:
    return datetime(2031, 3, day, hour, minute, tzinfo=UTC)


def _window(api: Api, collection: str, **params: str) -> dict[str, Any]:
    response = api.get(api.collection(collection) + "/upcoming", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _jobs(listing: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in listing["value"]}


def test_a_job_describes_its_schedule_only_when_asked(api: Api) -> None:
    name = api.new_collection()
    calendar = api.collection(name) + "/calendars/business"
    off = {"properties": {"weekends": True, "holidays": {"country": "FR"}}}
    assert api.put(calendar, off).status_code == 201
    job = http_job(
        startTime="2031-01-06T09:15:00",
        recurrence={
            "frequency": "Week",
            "timeZone": "Europe/Paris",
            "schedule": {"weekDays": WEEKDAYS, "hours": [9], "minutes": [15]},
            "excludeCalendars": ["business"],
            "onExcluded": "NextBusinessDay",
        },
    )
    path = api.job(name, "report")
    assert api.put(path, job).status_code == 201
    told = (
        "weekdays at 09:15 Europe/Paris, except business (weekends, holidays FR);"
        " moved to the next business day"
    )
    plain = api.get(path).json()
    assert "scheduleDescription" not in plain["properties"]  # Azure's answer, unchanged
    expanded = api.get(path, params={"$expand": "scheduleDescription"}).json()
    assert expanded["properties"]["scheduleDescription"] == told
    listed = api.get(api.job(name, "")[:-1], params={"$expand": "ScheduleDescription"}).json()
    assert [j["properties"]["scheduleDescription"] for j in listed["value"]] == [told]
    # The next page keeps it.
    assert api.put(api.job(name, "second"), http_job()).status_code == 201
    first = api.get(api.job(name, "")[:-1], params={"$expand": "scheduleDescription", "$top": 1})
    following = api.http.get(first.json()["nextLink"]).json()
    assert following["value"][0]["properties"]["scheduleDescription"] == "once, at once"
    # Sent back, the read-only field is ignored.
    again = api.put(path, expanded, params={"$expand": "scheduleDescription"})
    assert again.status_code == 200, again.text
    assert again.json()["properties"]["scheduleDescription"] == told
    bad = api.get(path, params={"$expand": "status"})
    assert bad.status_code == 400
    assert error_of(bad)["message"] == (
        "$expand: 'status' is not supported; the one value is scheduleDescription"
    )


def test_the_timeline_lists_every_job_with_its_marks(api: Api) -> None:
    name = api.new_collection()
    calendar = api.collection(name) + "/calendars/closed"
    assert api.put(calendar, {"properties": {"dates": ["2031-03-08"]}}).status_code == 201
    puts = {
        "night": http_job(
            startTime="2031-03-01T02:30:00",
            recurrence={"frequency": "Day", "timeZone": "America/New_York"},
        ),
        "skipping": http_job(
            startTime="2031-03-01T00:00:00Z",
            recurrence={"cron": "0 9 * * *", "excludeCalendars": ["closed"]},
        ),
        "moving": http_job(
            startTime="2031-03-01T00:00:00Z",
            recurrence={
                "cron": "0 10 * * *",
                "excludeCalendars": ["closed"],
                "onExcluded": "NextBusinessDay",
            },
        ),
        "spread": http_job(
            startTime="2031-03-01T00:00:00Z",
            recurrence={"cron": "0 12 * * *", "jitter": "PT30M"},
        ),
        "off": http_job(
            state="Disabled",
            startTime="2031-03-01T00:00:00Z",
            recurrence={"cron": "0 8 * * *"},
        ),
        "resting": http_job(
            state="Disabled",
            pause={"until": "2031-03-10T00:00:00Z", "reason": "maintenance"},
            startTime="2031-03-01T00:00:00Z",
            recurrence={"cron": "0 7 * * *"},
        ),
        "once": http_job(startTime="2031-03-11T06:00:00Z"),
        "later": http_job(startTime="2031-04-01T06:00:00Z"),
    }
    for job, body in puts.items():
        response = api.put(api.job(name, job), body)
        assert response.status_code == 201, response.text
    listing = _window(api, name, **{"from": FROM, "to": TO})
    assert (_at(listing["from"]), _at(listing["to"])) == (_at(FROM), _at(TO))
    jobs = _jobs(listing)
    assert sorted(jobs) == sorted(puts)

    night = jobs["night"]
    assert night["timeZone"] == "America/New_York"
    assert night["scheduleDescription"] == "every day at 02:30 America/New_York"
    times = [_at(e["executionTime"]) for e in night["executions"]]
    assert times == [  # EST (UTC-5) until the 9th, which moves to 03:30 EDT, then 02:30 EDT
        _day(7, 30, 7), _day(7, 30, 8), _day(7, 30, 9), _day(6, 30, 10), _day(6, 30, 11)
    ]  # fmt: skip
    assert [e["movedBySpringForward"] for e in night["executions"]] == [0, 0, 1, 0, 0]
    assert "repeatCount" in night["executions"][0] and "heldBy" not in night

    skipping = [
        (e["executionTime"], e.get("skippedByCalendar")) for e in jobs["skipping"]["executions"]
    ]
    assert [(_at(t), by) for t, by in skipping] == [
        (_day(9, day=7), None),
        (_day(9, day=8), "closed"),
        (_day(9, day=9), None),
        (_day(9, day=10), None),
        (_day(9, day=11), None),
    ]
    moved = [e for e in jobs["moving"]["executions"] if e.get("movedByCalendar")]
    assert [_at(e["executionTime"]) for e in moved] == [_day(10, day=9)]
    assert [_at(t) for t in moved[0]["scheduledExecutionTimes"]] == [
        _day(10, day=8),
        _day(10, day=9),
    ]

    spread = jobs["spread"]["executions"]
    assert len(spread) == 5
    for entry in spread:
        offset = _at(entry["executionTime"]) - _at(entry["scheduledExecutionTime"])
        assert entry.get("jittered", False) == (offset.total_seconds() > 0)
        assert 0 <= offset.total_seconds() < 30 * 60
    assert any(e.get("jittered") for e in spread)

    off = jobs["off"]
    assert off["heldBy"] == {"by": "job", "state": "Disabled", "until": None}
    assert [e.get("paused") for e in off["executions"]] == [True] * 5
    resting = jobs["resting"]
    assert _at(resting["heldBy"]["until"]) == _day(0, day=10)
    assert [(_at(e["executionTime"]), e.get("paused", False)) for e in resting["executions"]] == [
        (_day(7, day=7), True),
        (_day(7, day=8), True),
        (_day(7, day=9), True),
        (_day(7, day=10), False),
        (_day(7, day=11), False),
    ]
    assert [_at(e["executionTime"]) for e in jobs["once"]["executions"]] == [_day(6, day=11)]
    assert jobs["later"]["executions"] == []


def test_a_disabled_collection_holds_every_job(api: Api) -> None:
    name = api.new_collection()
    job = http_job(startTime="2031-03-01T00:00:00Z", recurrence={"cron": "0 9 * * *"})
    assert api.put(api.job(name, "daily"), job).status_code == 201
    assert api.post(api.collection(name) + "/disable").status_code == 200
    listing = _window(api, name, **{"from": FROM, "to": "2031-03-08T00:00:00Z"})
    assert listing["collectionState"] == "Disabled"
    daily = _jobs(listing)["daily"]
    assert daily["heldBy"] == {"by": "collection", "state": "Disabled", "until": None}
    assert [(_at(e["executionTime"]), e["paused"]) for e in daily["executions"]] == [
        (_day(9, day=7), True)
    ]
    # Paused until noon on the 7th: the executions from then on run.
    pause = {"state": "Disabled", "pause": {"until": "2031-03-07T12:00:00Z", "reason": "move"}}
    body = {"location": "West US", "properties": {"sku": {"name": "Standard"}, **pause}}
    assert api.put(api.collection(name), body).status_code == 200
    later = _window(api, name, **{"from": FROM, "to": "2031-03-09T00:00:00Z"})
    daily = _jobs(later)["daily"]
    assert _at(daily["heldBy"]["until"]) == _day(12, day=7)
    assert [(_at(e["executionTime"]), e.get("paused", False)) for e in daily["executions"]] == [
        (_day(9, day=7), True),
        (_day(9, day=8), False),
    ]


def test_the_default_window_is_the_next_24_hours(api: Api) -> None:
    name = api.new_collection()
    hourly = http_job(recurrence={"frequency": "Hour", "interval": 1})
    assert api.put(api.job(name, "hourly"), hourly).status_code == 201
    before = datetime.now(UTC)
    listing = _window(api, name)
    start, end = _at(listing["from"]), _at(listing["to"])
    assert before <= start and (end - start).total_seconds() == 24 * 3600
    found = [_at(e["executionTime"]) for e in _jobs(listing)["hourly"]["executions"]]
    assert 24 <= len(found) <= 25 and all(start <= t < end for t in found)


def test_the_window_is_bounded_and_bad_values_name_their_field(api: Api) -> None:
    name = api.new_collection()
    path = api.collection(name) + "/upcoming"
    cases = {
        ("2031-03-01T00:00:00Z", "2031-03-08T00:00:01Z"): "longer than 7 days",
        ("2031-03-02T00:00:00Z", "2031-03-01T00:00:00Z"): "is not after from",
        ("yesterday", "2031-03-01T00:00:00Z"): "from: 'yesterday' is not an ISO 8601",
        ("2031-03-01T00:00:00Z", "soon"): "to: 'soon' is not an ISO 8601",
    }
    for (start, end), says in cases.items():
        response = api.get(path, params={"from": start, "to": end})
        assert response.status_code == 400, response.text
        assert says in error_of(response)["message"]
    missing = api.get(api.collection("nothere") + "/upcoming")
    assert missing.status_code == 404


def test_more_executions_than_one_answer_holds_is_400_naming_the_limit(api: Api) -> None:
    name = api.new_collection()
    for job in ("a", "b", "c"):  # 3 × 10,080 minutes in 7 days > 20,000
        body = http_job(startTime="2031-03-01T00:00:00Z", recurrence={"frequency": "Minute"})
        assert api.put(api.job(name, job), body).status_code == 201
    week = {"from": "2031-03-02T00:00:00Z", "to": "2031-03-09T00:00:00Z"}
    response = api.get(api.collection(name) + "/upcoming", params=week)
    assert response.status_code == 400
    assert error_of(response)["message"] == (
        "from, to: the window holds more than 20000 executions across the collection's 3 jobs,"
        " the most one request lists; choose a shorter window"
    )
    day = {"from": "2031-03-02T00:00:00Z", "to": "2031-03-03T00:00:00Z"}
    assert all(len(j["executions"]) == 1440 for j in _window(api, name, **day)["value"])


def test_openapi_documents_the_timeline_and_the_description(api: Api) -> None:
    document = api.http.get("/openapi.json").json()
    path = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/"
    path += "Microsoft.Scheduler/jobCollections/{jobCollectionName}"
    operation = document["paths"][path + "/upcoming"]["get"]
    assert operation["operationId"] == "JobCollections_ListUpcoming"
    assert {p["name"] for p in operation["parameters"]} >= {"from", "to", "api-version"}
    schemas = document["components"]["schemas"]
    assert "20000 executions" in schemas["CollectionUpcomingList"]["description"]
    assert schemas["JobProperties"]["properties"]["scheduleDescription"]["readOnly"] is True
    get_job = document["paths"][path + "/jobs/{jobName}"]["get"]
    assert "$expand" in {p["name"] for p in get_job["parameters"]}
