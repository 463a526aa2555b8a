"""Check-in monitors (Horarium) through a real `horarium serve` with its engine, on SQLite and
PostgreSQL: the resource (validation as a job's, quotas, calendars), check-ins by their ping
URL, the engine turning a missed check-in into Late and Down within --poll-interval and telling
a receiver on 127.0.0.1 (MonitorLate, MonitorDown, MonitorUp, once each), maxRuntime, the rate
limit, and the ping token: never logged, never shown to a reader, replaced on request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests import http_receiver
from tests.api.api_client import Api, error_of
from tests.security.key_tools import new_key
from tests.server_fixtures import api as api
from tests.server_process import DATABASES, ServerProcess, serving
from tests.support import wait_until

PUBLIC_URL = "https://horarium.example.test/base"
POLL = 0.2
EVENTS = ["MonitorLate", "MonitorDown", "MonitorUp"]


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    env = {
        "HORARIUM_POLL_INTERVAL": str(POLL),
        "HORARIUM_PUBLIC_URL": PUBLIC_URL,
        "HORARIUM_NOTIFICATION_RETRY_SECONDS": "0.2",
    }
    with serving(
        request.param, tmp_path_factory.mktemp(f"monitors-{request.param}"), engine=True, env=env
    ) as process:
        yield process


@pytest.fixture
def receiver() -> Iterator[http_receiver.Receiver]:
    found = http_receiver.Receiver()
    yield found
    found.close()


def _monitor_path(api: Api, collection: str, name: str) -> str:
    return f"{api.collection(collection)}/monitors/{name}"


def _put(api: Api, collection: str, name: str, **properties: Any) -> httpx.Response:
    return api.put(_monitor_path(api, collection, name), {"properties": properties})


def _created(api: Api, collection: str, name: str, **properties: Any) -> dict[str, Any]:
    response = _put(api, collection, name, **properties)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def _ping_path(body: dict[str, Any]) -> str:
    """The path of a monitor's pingUrl below --public-url (the test calls the server itself)."""
    url = body["properties"]["pingUrl"]
    assert url.startswith(PUBLIC_URL + "/ping/")
    return url[len(PUBLIC_URL) :]


def _ping(server: ServerProcess, path: str, method: str = "GET", **kw: Any) -> httpx.Response:
    return httpx.request(method, server.url(path), timeout=30, **kw)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def _properties(api: Api, collection: str, name: str) -> dict[str, Any]:
    response = api.get(_monitor_path(api, collection, name))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["properties"]
    return found


# -- the resource ---------------------------------------------------------------------------------


def test_monitor_resource_put_get_list_delete(api: Api) -> None:
    collection = api.new_collection()
    recurrence = {"frequency": "Day", "schedule": {"hours": [9], "minutes": [30]}}
    recurrence["timeZone"] = "Europe/Berlin"
    body = _created(api, collection, "Nightly-Backup", recurrence=recurrence, grace="PT10M")
    assert body["type"] == "Microsoft.Scheduler/jobCollections/monitors"
    assert body["name"] == f"{collection}/Nightly-Backup"
    assert body["id"] == _monitor_path(api, collection, "Nightly-Backup")
    shown = body["properties"]
    assert shown["status"] == "New" and shown["lastCheckIn"] is None
    assert shown["grace"] == "00:10:00" and shown["state"] == "Enabled"
    token = _ping_path(body).split("/")[2]
    assert len(token) >= 22  # 128 bits or more, URL-safe base64
    # nextExpected is the job series' first instant: 09:30 in Berlin
    upcoming = api.get(_monitor_path(api, collection, "Nightly-Backup") + "/upcoming")
    assert upcoming.status_code == 200, upcoming.text
    first = upcoming.json()["value"][0]
    assert _instant(shown["nextExpected"]) == _instant(first["executionTime"])
    assert first["localTime"][11:16] == "09:30" and first["timeZone"] == "Europe/Berlin"
    again = api.get(_monitor_path(api, collection, "nightly-backup"))
    assert again.status_code == 200
    assert "pingUrl" not in again.json()["properties"]  # only its hash is stored
    replaced = _put(api, collection, "nightly-backup", recurrence=recurrence, grace="00:01:00")
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["properties"]["grace"] == "00:01:00"
    assert "pingUrl" not in replaced.json()["properties"]
    _created(api, collection, "another", startTime=_stamp(datetime.now(UTC) + timedelta(hours=1)))
    listed = api.get(api.collection(collection) + "/monitors", params={"$top": 1})
    assert [m["name"] for m in listed.json()["value"]] == [f"{collection}/another"]
    assert listed.json()["nextLink"].startswith(PUBLIC_URL)
    assert api.delete(_monitor_path(api, collection, "another")).status_code == 200
    gone = api.get(_monitor_path(api, collection, "another"))
    assert gone.status_code == 404 and error_of(gone)["code"] == "ResourceNotFound"


@pytest.mark.parametrize(
    ("properties", "code", "words"),
    [
        ({"grace": "PT5M"}, "BadRequest", "properties.recurrence: required"),
        (
            {"recurrence": {"frequency": "Hour", "schedule": {"minutes": [61]}}},
            "BadRequest",
            "recurrence.schedule.minutes",
        ),
        ({"recurrence": {"frequency": "Day", "count": 3}}, "BadRequest", "recurrence.count"),
        ({"recurrence": {"cron": "0 3 * * *"}, "grace": "soon"}, "BadRequest", "properties.grace"),
        ({"recurrence": {"cron": "0 3 * * *"}, "grace": "8.00:00:00"}, "BadRequest", "at most"),
        ({"recurrence": {"cron": "0 3 * * *"}, "maxRuntime": "00:00:00"}, "BadRequest", "maxRun"),
        ({"recurrence": {"cron": "0 3 * * *"}, "colour": "red"}, "BadRequest", "properties.colour"),
        ({"recurrence": {"cron": "0 3 * * *"}, "state": "Gone"}, "BadRequest", "properties.state"),
        (
            {"recurrence": {"cron": "0 3 * * *", "excludeCalendars": ["nope"]}},
            "BadRequest",
            "excludeCalendars[0]",
        ),
    ],
)
def test_bad_monitors_are_refused_naming_the_field(
    api: Api, properties: dict[str, Any], code: str, words: str
) -> None:
    collection = api.new_collection()
    response = _put(api, collection, "m", **properties)
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["code"] == code and words in error["message"]


def test_bad_names_and_quotas(api: Api) -> None:
    collection = api.new_collection(sku="Free")
    bad = _put(api, collection, "-bad", recurrence={"frequency": "Day"})
    assert bad.status_code == 400 and "monitorName" in error_of(bad)["message"]
    often = _put(api, collection, "often", recurrence={"frequency": "Minute", "interval": 5})
    assert often.status_code == 409 and error_of(often)["code"] == "RecurrenceQuotaExceeded"
    assert "the monitor can run every 5 minutes" in error_of(often)["message"]
    for i in range(5):
        _created(api, collection, f"m{i}", recurrence={"frequency": "Day"})
    sixth = _put(api, collection, "m5", recurrence={"frequency": "Day"})
    assert sixth.status_code == 409 and error_of(sixth)["code"] == "MonitorCountQuotaExceeded"


def test_next_expected_honours_calendars(api: Api, server: ServerProcess) -> None:
    collection = api.new_collection()
    calendar = api.put(
        api.collection(collection) + "/calendars/weekdays", {"properties": {"weekends": True}}
    )
    assert calendar.status_code == 201, calendar.text
    recurrence = {"cron": "0 6 * * *", "excludeCalendars": ["weekdays"]}
    created = _created(api, collection, "daily", recurrence=recurrence)
    shown = created["properties"]
    listing = api.get(_monitor_path(api, collection, "daily") + "/upcoming", params={"count": 7})
    runs = [e for e in listing.json()["value"] if "skippedByCalendar" not in e]
    skipped = [e for e in listing.json()["value"] if "skippedByCalendar" in e]
    assert skipped and all(_instant(e["executionTime"]).weekday() >= 5 for e in skipped)
    assert all(_instant(e["executionTime"]).weekday() < 5 for e in runs)
    assert _instant(shown["nextExpected"]) == _instant(runs[0]["executionTime"])

    # the calendar now excludes every day but Sundays (weekends no more): the expected check-in
    # moves to the next Sunday
    every_day = [(datetime.now(UTC).date() + timedelta(days=d)) for d in range(9)]
    closed = [d.isoformat() for d in every_day if d.weekday() != 6]
    changed = api.put(
        api.collection(collection) + "/calendars/weekdays", {"properties": {"dates": closed}}
    )
    assert changed.status_code == 200, changed.text
    moved = _instant(_properties(api, collection, "daily")["nextExpected"])
    assert moved.weekday() == 6 and moved != _instant(shown["nextExpected"])
    # a check-in's next expected instant honours the calendar too (computed off the writer)
    assert _ping(server, _ping_path(created)).status_code == 200
    checked = _properties(api, collection, "daily")
    expected = _instant(checked["nextExpected"])
    assert checked["status"] == "Up" and expected.weekday() == 6 and expected.hour == 6
    assert expected > _instant(checked["lastCheckIn"])
    refused = api.delete(api.collection(collection) + "/calendars/weekdays")
    assert refused.status_code == 409 and "monitor daily" in error_of(refused)["message"]


# -- check-ins ------------------------------------------------------------------------------------


def test_check_ins_move_the_status_and_are_listed_newest_first(
    api: Api, server: ServerProcess
) -> None:
    collection = api.new_collection()
    body = _created(api, collection, "etl", recurrence={"frequency": "Hour"})
    ping = _ping_path(body)
    assert _ping(server, ping).status_code == 200  # GET, as curl in a crontab does
    shown = _properties(api, collection, "etl")
    assert shown["status"] == "Up" and shown["lastCheckIn"] is not None
    assert _instant(shown["nextExpected"]) > _instant(shown["lastCheckIn"])
    assert _ping(server, ping + "/start", "POST").status_code == 200
    assert _ping(server, ping + "/fail", "POST", content=b"disk full").status_code == 200
    assert _properties(api, collection, "etl")["status"] == "Down"
    assert _ping(server, ping + "/0", "POST").status_code == 200
    assert _properties(api, collection, "etl")["status"] == "Up"
    long_body = "é" + "x" * 12_000
    assert _ping(server, ping + "/3", "POST", content=long_body.encode()).status_code == 200
    assert _properties(api, collection, "etl")["status"] == "Down"
    path = _monitor_path(api, collection, "etl") + "/checkIns"
    listed = api.get(path, params={"$top": 2})
    assert listed.status_code == 200, listed.text
    newest, before = (c["properties"] for c in listed.json()["value"])
    assert newest["kind"] == "Fail" and newest["exitCode"] == 3
    assert len(newest["body"].encode()) == 10 * 1024 and newest["body"].startswith("éxxx")
    assert before["kind"] == "Success" and before["exitCode"] == 0
    assert _instant(newest["time"]) >= _instant(before["time"])
    everything = api.get(path).json()["value"]
    kinds = [c["properties"]["kind"] for c in everything]
    assert kinds == ["Fail", "Success", "Fail", "Start", "Success"]
    assert everything[2]["properties"]["body"] == "disk full"


def test_unknown_tokens_and_bad_signals(server: ServerProcess) -> None:
    unknown = _ping(server, "/ping/" + "A" * 43)
    assert unknown.status_code == 404 and error_of(unknown)["code"] == "NotFound"
    assert _ping(server, "/ping/" + "A" * 500).status_code == 404
    assert _ping(server, "/ping/abc/restart").status_code == 404
    assert _ping(server, "/ping/abc/256").status_code == 404
    assert _ping(server, "/ping/abc", "DELETE").status_code == 405


def test_answers_carry_azure_request_ids(api: Api, server: ServerProcess) -> None:
    """Every answer (a check-in, a refusal, a management read) has its own x-ms-request-id, the
    caller's correlation id (else the request id) and its client id, cut to 200 characters."""
    collection = api.new_collection()
    ping = _ping_path(_created(api, collection, "ids", recurrence={"frequency": "Hour"}))
    ids = {"x-ms-correlation-request-id": "corr-1", "x-ms-client-request-id": "c" * 300}
    answers = [
        _ping(server, ping, "POST", headers=ids),
        _ping(server, "/ping/" + "A" * 43, headers=ids),
        api.get(_monitor_path(api, collection, "ids")),
    ]
    assert [a.status_code for a in answers] == [200, 404, 200]
    request_ids = {a.headers["x-ms-request-id"] for a in answers}
    assert len(request_ids) == 3
    for answer in answers[:2]:
        assert answer.headers["x-ms-correlation-request-id"] == "corr-1"
        assert answer.headers["x-ms-client-request-id"] == "c" * 200
    plain = answers[2].headers
    assert plain["x-ms-correlation-request-id"] == plain["x-ms-request-id"]
    assert "x-ms-client-request-id" not in plain


def test_check_ins_are_rate_limited_per_token(api: Api, server: ServerProcess) -> None:
    collection = api.new_collection()
    ping = _ping_path(_created(api, collection, "busy", recurrence={"frequency": "Hour"}))
    other = _ping_path(_created(api, collection, "quiet", recurrence={"frequency": "Hour"}))
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        answers = [client.get(ping) for _ in range(25)]
    refused = [a for a in answers if a.status_code == 429]
    assert refused and all(a.status_code in (200, 429) for a in answers)
    assert error_of(refused[0])["code"] == "TooManyRequests"
    assert int(refused[0].headers["retry-after"]) >= 1
    assert _ping(server, other).status_code == 200  # another token is not held up


def test_disabled_monitor_is_paused_and_records_check_ins(api: Api, server: ServerProcess) -> None:
    collection = api.new_collection()
    soon = _stamp(datetime.now(UTC) + timedelta(seconds=1))
    body = _created(api, collection, "off", startTime=soon, grace="00:00:01", state="Disabled")
    assert body["properties"]["status"] == "Paused" and body["properties"]["nextExpected"] is None
    assert _ping(server, _ping_path(body)).status_code == 200
    checked = api.get(_monitor_path(api, collection, "off") + "/checkIns").json()["value"]
    assert [c["properties"]["kind"] for c in checked] == ["Success"]
    shown = _properties(api, collection, "off")
    assert shown["status"] == "Paused" and shown["lastCheckIn"] is not None


# -- the engine -----------------------------------------------------------------------------------


def _notifying_collection(api: Api, receiver: http_receiver.Receiver, path: str) -> str:
    hook = {"events": EVENTS, "uri": receiver.base_url + path, "secret": "s3cret-monitors"}
    return api.new_collection(notifications=[hook])


def _events(receiver: http_receiver.Receiver, path: str) -> list[dict[str, Any]]:
    return [json.loads(r["body"]) for r in receiver.requests_to(path)]


def test_missed_check_in_turns_late_then_down_then_up(
    api: Api, server: ServerProcess, receiver: http_receiver.Receiver
) -> None:
    collection = _notifying_collection(api, receiver, "/hook")
    due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=5)
    recurrence = {"frequency": "Hour"}
    body = _created(api, collection, "cron-job", startTime=_stamp(due), recurrence=recurrence)
    body["properties"].update(grace="00:00:02")
    assert _properties(api, collection, "cron-job")["status"] == "New"
    replaced = api.put(
        _monitor_path(api, collection, "cron-job"), {"properties": body["properties"]}
    )
    assert replaced.status_code == 200, replaced.text  # read-only fields sent back are ignored
    assert _instant(replaced.json()["properties"]["nextExpected"]) == due

    wait_until(lambda: len(_events(receiver, "/hook")) >= 2, "MonitorLate and MonitorDown")
    late, down = _events(receiver, "/hook")[:2]
    assert late["event"] == "MonitorLate" and down["event"] == "MonitorDown"
    assert late["monitor"] == "cron-job" and late["jobCollection"] == collection
    assert late["monitorId"].endswith(f"/jobCollections/{collection}/monitors/cron-job")
    assert _instant(late["expectedTime"]) == due
    slack = timedelta(seconds=POLL + 2)  # the poll interval, and a busy machine's delay
    assert due <= _instant(late["time"]) <= due + slack
    assert (
        due + timedelta(seconds=2) <= _instant(down["time"]) <= due + timedelta(seconds=2) + slack
    )
    assert down["previousStatus"] == "Late" and "grace 00:00:02" in down["reason"]
    assert _properties(api, collection, "cron-job")["status"] == "Down"

    assert _ping(server, _ping_path(body)).status_code == 200
    wait_until(lambda: len(_events(receiver, "/hook")) >= 3, "MonitorUp")
    up = _events(receiver, "/hook")[2]
    assert up["event"] == "MonitorUp" and up["previousStatus"] == "Down"
    shown = _properties(api, collection, "cron-job")
    assert shown["status"] == "Up" and _instant(shown["nextExpected"]) == due + timedelta(hours=1)
    assert [e["event"] for e in _events(receiver, "/hook")] == [*EVENTS[:2], "MonitorUp"]


def test_a_run_past_max_runtime_is_down(
    api: Api, server: ServerProcess, receiver: http_receiver.Receiver
) -> None:
    collection = _notifying_collection(api, receiver, "/runtime")
    body = _created(
        api, collection, "slow", recurrence={"frequency": "Hour"}, maxRuntime="00:00:01"
    )
    started = datetime.now(UTC)
    assert _ping(server, _ping_path(body) + "/start").status_code == 200
    down = wait_until(lambda: _events(receiver, "/runtime"), "MonitorDown")[0]
    assert down["event"] == "MonitorDown" and "maxRuntime 00:00:01" in down["reason"]
    assert _instant(down["time"]) >= started + timedelta(seconds=1)
    assert _properties(api, collection, "slow")["status"] == "Down"


# -- the token ------------------------------------------------------------------------------------


def test_token_is_never_logged_nor_shown_to_a_reader(api: Api, server: ServerProcess) -> None:
    collection = api.new_collection()
    body = _created(api, collection, "secretive", recurrence={"frequency": "Hour"})
    ping = _ping_path(body)
    token = ping.split("/")[2]
    assert _ping(server, ping, "POST").status_code == 200
    assert _ping(server, ping + "/start").status_code == 200
    reader = Api(server, api.subscription)
    reader.http.headers["Authorization"] = "Bearer " + new_key(
        server, api.subscription, "--role", "reader"
    )
    try:
        path = _monitor_path(api, collection, "secretive")
        for answer in (
            reader.get(path),
            reader.get(api.collection(collection) + "/monitors"),
            reader.get(path + "/checkIns"),
        ):
            assert answer.status_code == 200 and token not in answer.text
            assert "pingUrl" not in answer.text
        refused = reader.post(path + "/regeneratePingUrl")
        assert refused.status_code == 403 and error_of(refused)["code"] == "AuthorizationFailed"
        assert (
            reader.put(path, {"properties": {"recurrence": {"frequency": "Day"}}}).status_code
            == 403
        )
    finally:
        reader.http.close()
    wait_until(lambda: "/ping/***" in server.log(), "the check-in's access line")
    assert token not in server.log()


def test_regenerate_replaces_the_token(api: Api, server: ServerProcess) -> None:
    collection = api.new_collection()
    old = _ping_path(_created(api, collection, "rotating", recurrence={"frequency": "Hour"}))
    answer = api.post(_monitor_path(api, collection, "rotating") + "/regeneratePingUrl")
    assert answer.status_code == 200, answer.text
    new = _ping_path(answer.json())
    assert new != old
    assert _ping(server, old).status_code == 404
    assert _ping(server, new).status_code == 200
    assert urlsplit(answer.json()["properties"]["pingUrl"]).hostname == "horarium.example.test"


def test_openapi_documents_monitors(server: ServerProcess) -> None:
    document = httpx.get(server.url("/openapi.json"), timeout=30).json()
    paths = document["paths"]
    monitor = next(p for p in paths if p.endswith("/monitors/{monitorName}"))
    assert set(paths[monitor]) == {"get", "put", "delete"}
    assert any(p.endswith("/monitors/{monitorName}/checkIns") for p in paths)
    assert any(p.endswith("/monitors/{monitorName}/regeneratePingUrl") for p in paths)
    assert paths["/ping/{token}"]["get"]["security"] == []
    assert paths["/ping/{token}/{signal}"]["post"]["security"] == []
    operations = [o["operationId"] for ops in paths.values() for o in ops.values()]
    assert len(operations) == len(set(operations))
    schemas = document["components"]["schemas"]
    assert "pingUrl" in schemas["MonitorProperties"]["properties"]
    events = schemas["JobCollectionNotification"]["properties"]["events"]["items"]["enum"]
    assert set(EVENTS) <= set(events)
