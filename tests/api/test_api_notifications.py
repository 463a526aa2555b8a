"""Collection notifications (Horarium) through a real `horarium serve` with its engine, on SQLite
and PostgreSQL: what a receiver on 127.0.0.1 is sent for each event, signed so that it can
verify it; the secret never shown, logged or stored in clear; retries, give-ups and the outbound
policy; bad input refused naming the field."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from azure.mgmt.scheduler import SchedulerManagementClient

from tests import http_receiver
from tests.api.api_client import Api, database_url, error_of, http_job
from tests.api.test_api_sdk import BearerOverHttp, KeyCredential
from tests.server_process import DATABASES, LOOPBACK_ONLY, ServerProcess, serving
from tests.support import wait_until

ATTEMPTS = 3
SECRET = "whsec-" + "a1b2c3d4e5f6g7h8"
ALL_EVENTS = [
    "ExecutionFaulted",
    "JobFaulted",
    "ExecutionPostponed",
    "ExecutionSkipped",
    "JobRecovered",
]


def _answer(path: str, seen: int) -> int:
    """A path starting /fail answers 500, one starting /flaky 500 the first time and 200 after,
    any other 200."""
    if path.startswith("/fail") or (path.startswith("/flaky") and seen == 1):
        return 500
    return 200


class Receiver(http_receiver.Receiver):
    """Records every request (`_answer` says how it is answered)."""

    def __init__(self) -> None:
        super().__init__(_answer)

    def events(self, path: str) -> list[dict[str, Any]]:
        """The notifications sent to `path`, each checked against its signature."""
        out = []
        for request in self.requests_to(path):
            headers = {k.lower(): v for k, v in request["headers"].items()}
            expected = hmac.new(SECRET.encode(), request["body"], hashlib.sha256).hexdigest()
            assert headers["x-horarium-signature"] == f"sha256={expected}"
            assert headers["content-type"].startswith("application/json")
            body = json.loads(request["body"])
            assert headers["x-horarium-event"] == body["event"]
            assert headers["x-horarium-delivery"] == body["id"]
            out.append(body)
        return out


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    env = {
        "HORARIUM_NOTIFICATION_ATTEMPTS": str(ATTEMPTS),
        "HORARIUM_NOTIFICATION_RETRY_SECONDS": "0.2",
        # 127.0.0.2 stands for an address the operator denies (a loopback one: tests reach
        # nothing else).
        "HORARIUM_OUTBOUND_DENY": LOOPBACK_ONLY["HORARIUM_OUTBOUND_DENY"] + ",127.0.0.2/32",
    }
    with serving(
        request.param,
        tmp_path_factory.mktemp(f"notify-{request.param}"),
        engine=True,
        env=env,
    ) as process:
        yield process


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _collection(api: Api, *notifications: dict[str, Any]) -> str:
    name = f"jc{uuid.uuid4().hex[:8]}"
    body = {
        "location": "West US",
        "properties": {"sku": {"name": "Standard"}, "notifications": list(notifications)},
    }
    response = api.put(api.collection(name), body)
    assert response.status_code == 201, response.text
    return name


def _notify(uri: str, events: list[str] | None = None) -> dict[str, Any]:
    return {"events": events or ALL_EVENTS, "uri": uri, "secret": SECRET}


def _once(uri: str) -> dict[str, Any]:
    """A one-time job run at once, with a single attempt."""
    body = http_job(uri)
    body["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    return body


def _of(events: list[dict[str, Any]], event: str, job: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == event and e["job"] == job]


def _state(api: Api, collection: str, job: str) -> str:
    return str(api.get(api.job(collection, job)).json()["properties"]["state"]).lower()


def test_a_fault_and_the_recovery_after_it_are_notified_signed(
    api: Api, receiver: Receiver
) -> None:
    name = _collection(api, _notify(receiver.base_url + "/notify"))
    quiet = api.new_collection()  # no notifications: nothing is sent for it
    assert api.put(api.job(quiet, "q"), _once(receiver.base_url + "/fail-quiet")).status_code == 201
    assert api.put(api.job(name, "ok"), _once(receiver.base_url + "/ok-first")).status_code == 201
    assert api.put(api.job(name, "f"), _once(receiver.base_url + "/fail")).status_code == 201

    wait_until(lambda: _of(receiver.events("/notify"), "JobFaulted", "f"), "JobFaulted")
    events = receiver.events("/notify")
    [faulted] = _of(events, "ExecutionFaulted", "f")
    [job_faulted] = _of(events, "JobFaulted", "f")
    assert faulted["subscriptionId"] == api.subscription
    assert faulted["resourceGroup"] == "rg1" and faulted["jobCollection"] == name
    assert faulted["jobId"].endswith(f"/jobCollections/{name}/jobs/f")
    execution = faulted["execution"]
    assert execution["status"] == "Failed" and execution["actionName"] == "MainAction"
    assert "InternalServerError" in execution["message"] and execution["executionTag"]
    assert job_faulted["state"] == "Faulted"
    assert _state(api, name, "f") == "faulted"

    # The job that succeeded without a fault before is no recovery.
    wait_until(lambda: _state(api, name, "ok") == "completed", "the first job completed")

    # A recurring job run now: its first run faults (no JobFaulted: a run outside the series
    # leaves the state as it is), its next one succeeds: a recovery.
    daily = http_job(receiver.base_url + "/flaky", recurrence={"frequency": "Day", "interval": 1})
    daily["properties"]["startTime"] = "2030-01-01T00:00:00Z"
    daily["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    assert api.put(api.job(name, "d"), daily).status_code == 201
    assert api.post(api.job(name, "d") + "/run").status_code in (200, 202)
    wait_until(lambda: _of(receiver.events("/notify"), "ExecutionFaulted", "d"), "its fault")
    assert api.post(api.job(name, "d") + "/run").status_code in (200, 202)
    wait_until(lambda: _of(receiver.events("/notify"), "JobRecovered", "d"), "JobRecovered")
    [recovered] = _of(receiver.events("/notify"), "JobRecovered", "d")
    assert recovered["execution"]["status"] == "Completed"
    [fault] = _of(receiver.events("/notify"), "ExecutionFaulted", "d")
    # Compared as instants: the API trims trailing zeros from the fraction of a second.
    ended, since, sent = (
        datetime.fromisoformat(t)
        for t in (fault["execution"]["endTime"], recovered["faultedSince"], recovered["time"])
    )
    assert ended <= since <= sent

    # Nothing more: one notification per event, none for the job without a fault, none for the
    # collection without notifications (it faulted meanwhile).
    wait_until(lambda: _state(api, quiet, "q") == "faulted", "the quiet job faulted")
    time.sleep(2)  # a few delivery rounds: anything wrongly sent would have arrived
    events = receiver.events("/notify")
    assert sorted((e["event"], e["job"]) for e in events) == [
        ("ExecutionFaulted", "d"),
        ("ExecutionFaulted", "f"),
        ("JobFaulted", "f"),
        ("JobRecovered", "d"),
    ]
    assert all(e["jobCollection"] == name for e in events)
    assert len({e["id"] for e in events}) == 4
    assert SECRET not in (receiver.requests_to("/notify")[0]["body"]).decode()


def test_postponed_and_skipped_executions_are_notified(
    api: Api, receiver: Receiver, server: ServerProcess
) -> None:
    name = _collection(
        api, _notify(receiver.base_url + "/missed", ["ExecutionPostponed", "ExecutionSkipped"])
    )
    recurring = {"frequency": "Minute", "interval": 1}
    # Missed RunLatest (the default): the missed executions but the latest are Postponed.
    late = http_job(receiver.base_url + "/ok", recurrence=recurring)
    assert api.put(api.job(name, "late"), late).status_code == 201
    # Overlap Skip: while the first missed execution waits for its retry, the next ones due are
    # Skipped (missed RunAll runs each in turn).
    skip = http_job(
        receiver.base_url + "/fail-skip",
        recurrence=recurring,
        executionPolicy={"overlap": "Skip", "missed": "RunAll", "catchUpWindow": "PT1H"},
    )
    skip["properties"]["action"]["retryPolicy"] = {
        "retryType": "Fixed",
        "retryInterval": "00:10:00",
        "retryCount": 1,
    }
    assert api.put(api.job(name, "skip"), skip).status_code == 201
    _fall_behind(server, api, name, ["late", "skip"], minutes=5)

    wait_until(lambda: _of(receiver.events("/missed"), "ExecutionPostponed", "late"), "Postponed")
    wait_until(lambda: _of(receiver.events("/missed"), "ExecutionSkipped", "skip"), "Skipped")
    events = receiver.events("/missed")
    [postponed] = _of(events, "ExecutionPostponed", "late")
    assert postponed["count"] == len(postponed["executions"]) >= 4
    history = api.get(api.job(name, "late") + "/history").json()["value"]
    recorded = sorted(
        _instant(e["properties"]["expectedExecutionTime"])
        for e in history
        if e["properties"].get("status") == "Postponed"
    )
    told = sorted(_instant(e["expectedExecutionTime"]) for e in postponed["executions"])
    assert told == recorded  # it tells of the recorded entries, each once
    skipped = _of(events, "ExecutionSkipped", "skip")[0]["execution"]
    assert skipped["status"] == "Skipped" and "Skip" in skipped["message"]
    history = api.get(api.job(name, "skip") + "/history").json()["value"]
    expected = {
        _instant(e["properties"]["expectedExecutionTime"])
        for e in history
        if e["properties"].get("status") == "Skipped"
    }
    assert _instant(skipped["expectedExecutionTime"]) in expected
    assert {e["event"] for e in events} <= {"ExecutionPostponed", "ExecutionSkipped"}
    # Its next executions would be Skipped again (the retry waits): with the collection gone,
    # nothing more is sent (its notifications left in the outbox are dropped).
    assert api.delete(api.collection(name)).status_code == 200


def test_a_failing_receiver_is_retried_then_given_up_without_delaying_executions(
    api: Api, receiver: Receiver, server: ServerProcess
) -> None:
    denied = "http://127.0.0.2:9/denied"
    name = _collection(
        api,
        _notify(receiver.base_url + "/fail-notify", ["ExecutionFaulted"]),
        _notify(denied, ["ExecutionFaulted"]),
        _notify(receiver.base_url + "/accepts", ["ExecutionFaulted"]),
    )
    before = _metrics(server)
    assert api.put(api.job(name, "f"), _once(receiver.base_url + "/fail")).status_code == 201
    wait_until(lambda: len(receiver.requests_to("/fail-notify")) >= ATTEMPTS, "every attempt")
    # Meanwhile executions run as ever.
    assert api.put(api.job(name, "next"), _once(receiver.base_url + "/ok")).status_code == 201
    wait_until(lambda: _state(api, name, "next") == "completed", "the next job ran")

    def given_up() -> bool:
        now = _metrics(server)
        return _delta(now, before, "horarium_notifications_failed_total") >= 2

    wait_until(given_up, "the notification given up")
    time.sleep(1.5)  # well beyond the retry delays: no attempt beyond the last
    assert len(receiver.requests_to("/fail-notify")) == ATTEMPTS
    assert len(receiver.events("/accepts")) == 1  # the target that accepts it got it once
    after = _metrics(server)
    assert _delta(after, before, "horarium_notifications_delivered_total") == 1
    assert _delta(after, before, "horarium_notification_failures_total") == ATTEMPTS + 1
    assert _delta(after, before, "horarium_notifications_failed_total") == 2
    log = server.log()
    assert "notification ExecutionFaulted of job" in log and "given up" in log
    assert "denied by the outbound policy" in log  # 127.0.0.2: refused, not sent, not retried
    assert SECRET not in log


def test_the_secret_is_never_shown_and_kept_when_not_sent_again(
    api: Api, receiver: Receiver, server: ServerProcess
) -> None:
    uri = receiver.base_url + "/kept"
    name = _collection(api, _notify(uri, ["ExecutionFaulted"]))
    shown = api.get(api.collection(name)).json()["properties"]["notifications"]
    assert shown == [{"events": ["ExecutionFaulted"], "uri": uri}]
    listed = api.get(
        f"/subscriptions/{api.subscription}/providers/Microsoft.Scheduler/jobCollections"
    ).text
    assert SECRET not in listed and SECRET not in api.get(api.collection(name)).text

    # GET → edit → PUT, and a PATCH of something else, keep the stored secret.
    body = api.get(api.collection(name)).json()
    body["tags"] = {"team": "ops"}
    assert api.put(api.collection(name), body).status_code == 200
    assert api.patch(api.collection(name), {"tags": {"team": "dev"}}).status_code == 200
    masked = {**_notify(uri, ["ExecutionFaulted", "JobFaulted"]), "secret": "***"}
    answer = api.patch(api.collection(name), {"properties": {"notifications": [masked]}})
    assert answer.status_code == 200, answer.text
    assert "secret" not in json.dumps(answer.json())

    # …which the delivery still signs with (Receiver.events checks it).
    assert api.put(api.job(name, "f"), _once(receiver.base_url + "/fail")).status_code == 201
    wait_until(lambda: len(receiver.events("/kept")) >= 2, "ExecutionFaulted and JobFaulted")

    # Sent to another host, the stored secret is not: it is required again.
    elsewhere = {"events": ["JobFaulted"], "uri": "http://127.0.0.3:9/x"}
    refused = api.patch(api.collection(name), {"properties": {"notifications": [elsewhere]}})
    assert refused.status_code == 400
    assert error_of(refused)["message"].startswith("properties.notifications[0].secret:")
    assert api.get(api.collection(name)).json()["properties"]["notifications"] == shown_after(uri)

    assert SECRET not in _stored_documents(server)
    assert SECRET not in server.log()

    # Removing them: the collection is as one without notifications.
    cleared = api.patch(api.collection(name), {"properties": {"notifications": []}})
    assert "notifications" not in cleared.json()["properties"]


def shown_after(uri: str) -> list[dict[str, Any]]:
    return [{"events": ["ExecutionFaulted", "JobFaulted"], "uri": uri}]


@pytest.mark.parametrize(
    ("notifications", "field"),
    [
        ({"uri": "http://127.0.0.1:9/"}, "properties.notifications:"),
        ([{"events": ["JobFaulted"], "uri": "http://127.0.0.1:9/"}], "[0].secret:"),
        ([{"events": ["JobFaulted"], "uri": "http://127.0.0.1:9/", "secret": ""}], "[0].secret:"),
        ([{"events": ["JobFaulted", "Oops"], "uri": "http://x/", "secret": "s"}], "[0].events[1]:"),
        ([{"events": [], "uri": "http://127.0.0.1:9/", "secret": "s"}], "[0].events:"),
        ([{"events": ["JobFaulted"], "uri": "/relative", "secret": "s"}], "[0].uri:"),
        ([{"events": ["JobFaulted"], "uri": "ftp://127.0.0.1/", "secret": "s"}], "[0].uri:"),
        ([{"events": ["JobFaulted"], "secret": "s"}], "[0].uri:"),
        ([{"events": ["JobFaulted"], "uri": "http://a/", "secret": "s", "x": 1}], "[0].x:"),
        (["http://127.0.0.1:9/"], "properties.notifications[0]:"),
        ([{"events": ["JobFaulted"], "uri": "http://a/", "secret": "s"}] * 11, "properties"),
        # This server has no --smtp-url: an email channel cannot be sent (test_api_channels).
        ([{"events": ["JobFaulted"], "email": {"to": ["ops@example.com"]}}], "[0].email:"),
        ([{"format": "pager", "events": ["JobFaulted"]}], "[0].format:"),
        ([{"format": "pagerduty", "events": ["JobFaulted"]}], "[0].routingKey:"),
    ],
)
def test_bad_notifications_are_refused_naming_the_field(
    api: Api, notifications: Any, field: str
) -> None:
    name = f"jc{uuid.uuid4().hex[:8]}"
    body = {"properties": {"sku": {"name": "Standard"}, "notifications": notifications}}
    response = api.put(api.collection(name), body)
    assert response.status_code == 400, response.text
    message = error_of(response)["message"]
    where = field if field.startswith("properties") else f"properties.notifications{field}"
    assert message.startswith(where), message
    assert api.get(api.collection(name)).status_code == 404  # nothing stored


def test_the_sdk_and_the_openapi_document_read_collections_with_notifications(
    api: Api, server: ServerProcess
) -> None:
    name = _collection(api, _notify("http://127.0.0.1:9/n", ["JobFaulted"]))
    credential = KeyCredential(server.token)
    client = SchedulerManagementClient(
        credential,
        api.subscription,
        base_url=server.base_url,
        authentication_policy=BearerOverHttp(credential),
    )
    try:
        read = client.job_collections.get("rg1", name)
        assert read.name == name and read.properties.sku.name == "Standard"
    finally:
        client.close()
    schemas = api.http.get("/openapi.json").json()["components"]["schemas"]
    notification = schemas["JobCollectionNotification"]
    monitor_events = ["MonitorLate", "MonitorDown", "MonitorUp"]  # docs/monitors.md
    deadline_events = ["ExecutionLate", "ExecutionOverran"]  # docs/engine.md, Deadlines
    enum = notification["properties"]["events"]["items"]["enum"]
    assert enum == ALL_EVENTS + monitor_events + deadline_events
    assert "secret" in notification["properties"]
    channel = notification["properties"]
    assert channel["format"]["enum"] == ["horarium", "slack", "teams", "pagerduty", "email"]
    assert channel["routingKey"]["writeOnly"] is True
    assert channel["email"]["properties"]["to"]["maxItems"] == 10
    listed = schemas["JobCollectionProperties"]["properties"]["notifications"]
    assert listed["items"] == {"$ref": "#/components/schemas/JobCollectionNotification"}


# -- helpers -------------------------------------------------------------------------------------


def _metrics(server: ServerProcess, event: str = "ExecutionFaulted") -> dict[str, float]:
    """The notification counters of /metrics for `event`."""
    text = httpx.get(server.url("/metrics"), headers=server.auth_headers(), timeout=10).text
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("horarium_notification") and f'event="{event}"' in line:
            series, value = line.rsplit(" ", 1)
            out[series.split("{", 1)[0]] = float(value)
    return out


def _delta(now: dict[str, float], before: dict[str, float], metric: str) -> float:
    return now.get(metric, 0.0) - before.get(metric, 0.0)


def _instant(text: str) -> datetime:
    """An instant the API wrote (compared as instants: it trims trailing zeros of the
    fraction of a second)."""
    return datetime.fromisoformat(text)


def _fall_behind(
    server: ServerProcess, api: Api, collection: str, names: list[str], minutes: int
) -> None:
    """Leave the jobs' rows as an engine that was down for `minutes` would: created an hour
    ago, their next execution `minutes` minutes ago (a minute boundary). Written only while no
    engine holds them: an execution claimed before (the one due at creation) records its
    advance of the row when it ends, which would undo this."""
    from sqlalchemy import select, update

    from horarium.store.core.db import create_engine
    from horarium.store.core.schema import job_collections, jobs

    now = datetime.now(UTC).replace(second=0, microsecond=0)
    key = f"{api.subscription}/rg1/{collection}".lower()

    async def write(pending: list[str]) -> list[str]:
        """The jobs of `pending` still to be written (those an engine holds now)."""
        engine = create_engine(database_url(server))
        try:
            async with engine.begin() as conn:
                owner = select(job_collections.c.id).where(job_collections.c.key == key)
                written = await conn.execute(
                    update(jobs)
                    .where(
                        jobs.c.collection_id == owner.scalar_subquery(),
                        jobs.c.key.in_([n.lower() for n in pending]),
                        jobs.c.lease_owner.is_(None),
                    )
                    .values(
                        schedule_set_at=now - timedelta(hours=1),
                        next_execution_at=now - timedelta(minutes=minutes),
                    )
                    .returning(jobs.c.key)
                )
                done = set(written.scalars())
        finally:
            await engine.dispose()
        return [name for name in pending if name.lower() not in done]

    left = list(names)

    def behind() -> bool:
        left[:] = asyncio.run(write(left))
        return not left

    wait_until(behind, "the engine to let go of the jobs so that they can fall behind")


def _stored_documents(server: ServerProcess) -> str:
    """The collections' stored documents and the notification rows, as text, read from the
    database itself (on SQLite, the file's bytes, WAL included)."""
    url = database_url(server)
    if url.startswith("sqlite"):
        data = b""
        for suffix in ("", "-wal"):
            path = server.data_dir / f"horarium.sqlite3{suffix}"
            if path.exists():
                data += path.read_bytes()
        return data.decode("latin-1")

    from sqlalchemy import text

    from horarium.store.core.db import create_engine

    async def read() -> str:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                rows = await conn.execute(
                    text(
                        "SELECT document::text FROM job_collections"
                        " UNION ALL SELECT body FROM notifications"
                    )
                )
                return "\n".join(str(r[0]) for r in rows)
        finally:
            await engine.dispose()

    return asyncio.run(read())
