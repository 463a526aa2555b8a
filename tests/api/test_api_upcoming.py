"""Beyond Azure: the next executions of a job, in UTC and on its wall clock, with DST marks."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.api.api_client import Api, error_of, http_job
from tests.server_process import ServerProcess
from tests.support import hour_with_room

HOUR = timedelta(hours=1)


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


# EU daylight saving time starts on Sunday 2031-03-30 at 02:00 local time: 02:30 does not exist.
BERLIN_DAILY = http_job(
    startTime="2031-03-29T02:30:00",
    recurrence={"frequency": "Day", "interval": 1, "timeZone": "Europe/Berlin"},
)


def _times(listing: dict[str, Any]) -> list[tuple[str, str, bool]]:
    return [
        (e["executionTime"], e["localTime"], e["movedBySpringForward"]) for e in listing["value"]
    ]


def test_upcoming_of_a_stored_job_shows_the_daylight_saving_shift(api: Api) -> None:
    name = api.new_collection()
    created = api.put(api.job(name, "berlin"), BERLIN_DAILY).json()["properties"]
    assert created["startTime"] == "2031-03-29T02:30:00"  # wall clock in the job's zone
    assert created["status"]["nextExecutionTime"] == "2031-03-29T01:30:00Z"
    response = api.get(api.job(name, "berlin") + "/upcoming", params={"count": 3})
    assert response.status_code == 200
    listing = response.json()
    assert _times(listing) == [
        ("2031-03-29T01:30:00Z", "2031-03-29T02:30:00+01:00", False),
        ("2031-03-30T01:30:00Z", "2031-03-30T03:30:00+02:00", True),  # 02:30 did not exist
        ("2031-03-31T00:30:00Z", "2031-03-31T02:30:00+02:00", False),
    ]
    moved = listing["value"][1]
    assert moved["scheduledLocalTime"] == "2031-03-30T02:30:00"
    assert moved["timeZone"] == "Europe/Berlin" and moved["utcOffset"] == "+02:00"
    assert moved["daylightSavingTime"] is True
    assert [e["repeatCount"] for e in listing["value"]] == [1, 2, 3]
    assert listing["nextLink"] is None


def test_upcoming_of_an_unsaved_definition(api: Api) -> None:
    name = api.new_collection()
    response = api.post(api.job(name, "draft") + "/upcoming", BERLIN_DAILY, params={"count": 2})
    assert response.status_code == 200, response.text
    assert _times(response.json()) == [
        ("2031-03-29T01:30:00Z", "2031-03-29T02:30:00+01:00", False),
        ("2031-03-30T01:30:00Z", "2031-03-30T03:30:00+02:00", True),
    ]
    assert api.get(api.job(name, "draft")).status_code == 404  # nothing was saved
    bad = api.post(
        api.job(name, "draft") + "/upcoming",
        http_job(recurrence={"frequency": "Week", "schedule": {"weekDays": ["Someday"]}}),
    )
    assert bad.status_code == 400
    assert "properties.recurrence.schedule.weekDays[0]" in error_of(bad)["message"]


def test_upcoming_honours_the_count_and_the_state(api: Api) -> None:
    name = api.new_collection()
    twice = http_job(
        startTime="2031-01-01T00:00:00Z",
        recurrence={"frequency": "Hour", "interval": 1, "count": 2},
    )
    api.put(api.job(name, "twice"), twice)
    listing = api.get(api.job(name, "twice") + "/upcoming", params={"count": 10}).json()
    assert [e["executionTime"] for e in listing["value"]] == [
        "2031-01-01T00:00:00Z",
        "2031-01-01T01:00:00Z",
    ]
    api.patch(api.job(name, "twice"), {"properties": {"state": "Disabled"}})
    # A disabled job: where it would resume if enabled now.
    resumed = api.get(api.job(name, "twice") + "/upcoming", params={"count": 1}).json()
    assert [e["executionTime"] for e in resumed["value"]] == ["2031-01-01T00:00:00Z"]
    ended = http_job(recurrence={"frequency": "Day", "endTime": "2016-01-01T00:00:00Z"})
    api.put(api.job(name, "ended"), ended)
    over = api.get(api.job(name, "ended") + "/upcoming").json()
    assert (over["value"], over["nextLink"]) == ([], None)
    assert over["scheduleDescription"].endswith(" UTC; until 2016-01-01 00:00")
    for count in (0, 1001, "many"):
        response = api.get(api.job(name, "twice") + "/upcoming", params={"count": count})
        assert response.status_code == 400 and "count" in error_of(response)["message"]
    assert api.get(api.job(name, "nope") + "/upcoming").status_code == 404


def test_upcoming_marks_overdue_executions_with_what_the_missed_policy_does(
    api: Api, server: ServerProcess
) -> None:
    from tests.ui.ui_support import job_id, update_job

    name = api.new_collection()
    policy = {"missed": "RunAll", "catchUpWindow": "PT3H"}
    hourly = http_job(
        startTime="2024-01-01T00:00:00Z",
        recurrence={"frequency": "Hour", "interval": 1},
        executionPolicy=policy,
    )
    api.put(api.job(name, "hourly"), hourly)
    # Set a day ago, the job's execution of five hours ago has not run: the service was down
    # since (this server's scheduler is off).
    hour = hour_with_room()
    update_job(
        server,
        job_id(server, name, "hourly"),
        schedule_set_at=hour - 24 * HOUR,
        next_execution_at=hour - 5 * HOUR,
        next_repeat=19,
    )

    def marks() -> tuple[dict[str, Any], list[tuple[str, str | None]]]:
        listing = api.get(api.job(name, "hourly") + "/upcoming", params={"count": 8}).json()
        return listing, [
            (e["executionTime"], e.get("ifMissed") if e.get("overdue") else None)
            for e in listing["value"]
        ]

    listing, seen = marks()
    times = [_iso(hour + i * HOUR) for i in range(-5, 3)]
    # RunAll: those inside the catch-up window (three hours before now) run, older ones wait.
    assert seen == list(zip(times, [*["Postponed"] * 3, *["Runs"] * 3, None, None], strict=True))
    assert listing["executionPolicy"] == {
        "overlap": "Allow",
        "missed": "RunAll",
        "catchUpWindow": "03:00:00",
    }
    api.patch(api.job(name, "hourly"), {"properties": {"executionPolicy": {"missed": "Skip"}}})
    assert [fate for _, fate in marks()[1]] == [*["Postponed"] * 6, None, None]
    api.patch(api.job(name, "hourly"), {"properties": {"executionPolicy": None}})
    listing, seen = marks()
    assert [fate for _, fate in seen] == [*["Postponed"] * 5, "Runs", None, None]  # RunLatest
    assert "executionPolicy" not in listing  # a job without one: the listing as before

    draft = api.post(api.job(name, "draft") + "/upcoming", hourly, params={"count": 2}).json()
    assert draft["executionPolicy"]["missed"] == "RunAll"
    assert not any("overdue" in e for e in draft["value"])  # a new job has missed nothing
