"""Notification channels (Horarium) through a real `horarium serve` with its engine, on SQLite
and PostgreSQL: a monitor's MonitorDown and MonitorUp, and a job's fault and recovery, sent to
Slack, Teams and PagerDuty receivers on 127.0.0.1 in their services' documented shapes
(tests/data/channels) and mailed through a real SMTP server on 127.0.0.1 (aiosmtpd, with a
login), each naming the event, the resource, the time in its zone, the last message and the
dashboard link; the channels' secrets (webhook URLs, routing key, SMTP password) never shown,
logged or stored in clear, and kept when a GET's body is sent back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from typing import Any

import httpx
import pytest

from tests import http_receiver
from tests.api.api_client import Api, http_job
from tests.api.test_api_notifications import _stored_documents
from tests.channel_schemas import check
from tests.server_fixtures import api as api
from tests.server_process import DATABASES, ServerProcess, serving
from tests.smtp_server import Inbox, smtp_server
from tests.support import wait_until

PUBLIC_URL = "https://horarium.example.test/base"
SMTP_PASSWORD = "smtp-pw-9c1e"
SLACK_SECRET = "T0001/B0001/slacksecret77"
TEAMS_SECRET = "webhookb2/teamssecret88"
ROUTING_KEY = "R0UT1NGKEY0123456789abcdef012345"
MONITOR_EVENTS = ["MonitorDown", "MonitorUp"]
JOB_EVENTS = ["ExecutionFaulted", "JobRecovered"]


@pytest.fixture(scope="module")
def inbox() -> Iterator[tuple[Inbox, int]]:
    with smtp_server("horarium", SMTP_PASSWORD) as found:
        yield found


def _answer(path: str, seen: int) -> int:
    """A path starting /fail answers 500, one starting /flaky 500 the first time and 200 after;
    any other 200 (202 for PagerDuty, as its service does)."""
    if path.startswith("/fail") or (path.startswith("/flaky") and seen == 1):
        return 500
    return 202 if path.startswith("/pd") else 200


@pytest.fixture(scope="module")
def receiver() -> Iterator[http_receiver.Receiver]:
    found = http_receiver.Receiver(_answer)
    yield found
    found.close()


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    inbox: tuple[Inbox, int],
) -> Iterator[ServerProcess]:
    env = {
        "HORARIUM_PUBLIC_URL": PUBLIC_URL,
        "HORARIUM_NOTIFICATION_RETRY_SECONDS": "0.2",
        "HORARIUM_NOTIFICATION_ATTEMPTS": "2",
        "HORARIUM_SMTP_URL": f"smtp://horarium:{SMTP_PASSWORD}@127.0.0.1:{inbox[1]}",
        "HORARIUM_SMTP_FROM": "scheduler@example.com",
    }
    with serving(
        request.param, tmp_path_factory.mktemp(f"channels-{request.param}"), engine=True, env=env
    ) as process:
        yield process


def _channels(receiver: http_receiver.Receiver, tag: str, events: list[str]) -> list[Any]:
    base = receiver.base_url
    return [
        {"format": "slack", "events": events, "uri": f"{base}/slack-{tag}/{SLACK_SECRET}"},
        {"format": "Teams", "events": events, "uri": f"{base}/teams-{tag}/{TEAMS_SECRET}"},
        {"format": "pagerduty", "events": events, "uri": f"{base}/pd-{tag}",
         "routingKey": ROUTING_KEY},
        {"events": events, "email": {"to": [f"ops-{tag}@example.com", "oncall@example.org"]}},
    ]  # fmt: skip


def _sent(receiver: http_receiver.Receiver, prefix: str) -> list[dict[str, Any]]:
    """The JSON bodies POSTed to paths starting `prefix`, oldest first."""
    return [json.loads(r["body"]) for r in list(receiver.received) if r["path"].startswith(prefix)]


def _mails(inbox: Inbox, tag: str) -> list[EmailMessage]:
    return [m for to, m in inbox.messages() if f"ops-{tag}@example.com" in to]


def _body_text(message: EmailMessage) -> tuple[str, str]:
    plain = message.get_body(("plain",))
    rich = message.get_body(("html",))
    assert plain is not None and rich is not None
    return str(plain.get_content()), str(rich.get_content())


def test_a_monitor_down_and_up_reach_every_channel_in_its_shape(
    api: Api,
    server: ServerProcess,
    receiver: http_receiver.Receiver,
    inbox: tuple[Inbox, int],
) -> None:
    tag = uuid.uuid4().hex[:8]  # the receiver and the SMTP server serve both databases
    failing = {
        "format": "slack",
        "events": ["MonitorDown"],
        "uri": f"{receiver.base_url}/fail-{tag}/{SLACK_SECRET}",
    }
    channels = [*_channels(receiver, tag, MONITOR_EVENTS), failing]
    collection = api.new_collection(notifications=channels)
    path = f"{api.collection(collection)}/monitors/backup"
    start = (datetime.now(UTC) + timedelta(hours=2)).strftime("%Y-%m-%dT%H:00:00Z")
    recurrence = {"frequency": "Day", "timeZone": "Tokyo Standard Time"}
    created = api.put(path, {"properties": {"startTime": start, "recurrence": recurrence}})
    assert created.status_code == 201, created.text
    ping = created.json()["properties"]["pingUrl"][len(PUBLIC_URL) :]

    # GET → PUT of the collection keeps every channel's secret (shown masked, or not at all).
    answered = api.get(api.collection(collection))
    shown = answered.json()["properties"]["notifications"]
    for secret in (SLACK_SECRET, TEAMS_SECRET, ROUTING_KEY):
        assert secret not in answered.text
    assert shown[0]["uri"] == f"{receiver.base_url}/***" and shown[1]["format"] == "teams"
    assert "routingKey" not in shown[2] and shown[3]["format"] == "email"
    assert api.put(api.collection(collection), answered.json()).status_code == 200

    fail = httpx.post(server.url(ping + "/fail"), content=b"disk full <sda1>", timeout=30)
    assert fail.status_code == 200, fail.text
    wait_until(lambda: len(_sent(receiver, f"/pd-{tag}")) >= 1, "MonitorDown at PagerDuty")
    assert httpx.post(server.url(ping), timeout=30).status_code == 200
    wait_until(lambda: len(_sent(receiver, f"/pd-{tag}")) >= 2, "MonitorUp at PagerDuty")
    wait_until(lambda: len(_mails(inbox[0], tag)) >= 2, "two mails")
    wait_until(lambda: len(_sent(receiver, f"/slack-{tag}/")) >= 2, "Slack's two")
    wait_until(lambda: len(_sent(receiver, f"/teams-{tag}/")) >= 2, "Teams' two")

    link = f"{PUBLIC_URL}/ui/#/jobs/rg1/{collection}"
    for kind in ("slack", "teams"):
        down, up = _sent(receiver, f"/{kind}-{tag}/")
        check(kind, down)
        check(kind, up)
        text = json.dumps(down)
        assert "MonitorDown" in text and "monitor" in text and collection in text
        assert "(Asia/Tokyo)" in text and link in text and "reported a failure" in text
        assert "MonitorUp" in json.dumps(up)
    # The webhook URL the receiver was sent to is the one given, secret path included.
    assert receiver.requests_to(f"/slack-{tag}/{SLACK_SECRET}")
    trigger, resolve = _sent(receiver, f"/pd-{tag}")
    check("pagerduty", trigger)
    check("pagerduty", resolve)
    assert trigger["event_action"] == "trigger" and resolve["event_action"] == "resolve"
    assert trigger["routing_key"] == resolve["routing_key"] == ROUTING_KEY
    assert trigger["dedup_key"] == resolve["dedup_key"]
    assert trigger["dedup_key"].endswith(f"/jobcollections/{collection}/monitors/backup".lower())
    assert trigger["payload"]["severity"] == "critical" and trigger["client_url"] == link

    down_mail, up_mail = sorted(_mails(inbox[0], tag), key=lambda m: "MonitorUp" in m["Subject"])
    assert down_mail["Subject"] == f"[Horarium] MonitorDown: monitor {collection}/backup"
    assert down_mail["From"] == "scheduler@example.com"
    assert down_mail["To"] == f"ops-{tag}@example.com, oncall@example.org"
    plain, rich = _body_text(down_mail)
    assert "(Asia/Tokyo)" in plain and "(Asia/Tokyo)" in rich and link in plain
    assert "MonitorUp" in up_mail["Subject"]
    assert len(_mails(inbox[0], tag)) == 2  # one message per event, for both recipients

    # The failing Slack webhook is given up after its attempts, logged by its origin only.
    given_up = f"to slack {receiver.base_url}"
    wait_until(lambda: f"{collection}/backup {given_up}" in server.log(), "the failure line")
    wait_until(lambda: "HTTP 500" in server.log() and "given up" in server.log(), "given up")
    assert len(receiver.requests_to(f"/fail-{tag}/{SLACK_SECRET}")) == 2
    log = server.log()
    for secret in (SMTP_PASSWORD, SLACK_SECRET, TEAMS_SECRET, ROUTING_KEY):
        assert secret not in log
    stored = _stored_documents(server)
    for secret in (SLACK_SECRET, TEAMS_SECRET, ROUTING_KEY):
        assert secret not in stored


def test_a_job_fault_and_recovery_trigger_and_resolve_in_the_jobs_zone(
    api: Api, server: ServerProcess, receiver: http_receiver.Receiver
) -> None:
    tag = uuid.uuid4().hex[:8]
    hooks = [n for n in _channels(receiver, tag, JOB_EVENTS) if "email" not in n]
    collection = api.new_collection(notifications=hooks)
    job = http_job(
        receiver.base_url + f"/flaky-{tag}",
        recurrence={"frequency": "Day", "interval": 1, "timeZone": "Asia/Kolkata"},
    )
    job["properties"]["startTime"] = "2030-01-01T00:00:00Z"
    job["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    assert api.put(api.job(collection, "d"), job).status_code == 201
    assert api.post(api.job(collection, "d") + "/run").status_code in (200, 202)
    wait_until(lambda: _sent(receiver, f"/pd-{tag}"), "ExecutionFaulted")
    assert api.post(api.job(collection, "d") + "/run").status_code in (200, 202)
    wait_until(lambda: len(_sent(receiver, f"/pd-{tag}")) >= 2, "JobRecovered")
    wait_until(lambda: len(_sent(receiver, f"/slack-{tag}/")) >= 2, "Slack's two")

    trigger, resolve = _sent(receiver, f"/pd-{tag}")
    check("pagerduty", trigger)
    check("pagerduty", resolve)
    assert (trigger["event_action"], resolve["event_action"]) == ("trigger", "resolve")
    assert trigger["dedup_key"] == resolve["dedup_key"]
    assert trigger["dedup_key"].endswith(f"/jobcollections/{collection}/jobs/d".lower())
    details = trigger["payload"]["custom_details"]
    assert details["Event"] == "ExecutionFaulted" and "(Asia/Kolkata)" in details["Time"]
    assert "+05:30" in details["Time"] and "InternalServerError" in details["Message"]
    assert trigger["client_url"] == f"{PUBLIC_URL}/ui/#/job/rg1/{collection}/d"
    for kind in ("slack", "teams"):
        wait_until(lambda k=kind: len(_sent(receiver, f"/{k}-{tag}/")) >= 2, f"{kind}'s two")
        for payload in _sent(receiver, f"/{kind}-{tag}/"):
            check(kind, payload)
            assert "(Asia/Kolkata)" in json.dumps(payload)
