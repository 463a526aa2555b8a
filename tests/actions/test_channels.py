"""Notification channels without a server: the Slack, Teams and PagerDuty bodies rendered from
the events' JSON checked against their services' schemas (tests/data/channels), the time in the
resource's zone, the dashboard link, PagerDuty's trigger / resolve and dedup_key, the e-mail's
two parts; the channels' validation (formats, recipients, the secret kept or required); and the
mailer against a real SMTP server on 127.0.0.1 (aiosmtpd), with a login, and --smtp-url's
checks."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Iterator
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from horarium.actions import channels
from horarium.actions.mail import Mailer, parse_smtp_url, smtp_warnings
from horarium.actions.outbound import OutboundPolicy
from horarium.model.errors import BadRequest
from horarium.model.notifications import keep_secrets, parse_notifications, shown
from tests.actions.tls_material import Pki, make_pki
from tests.channel_schemas import check
from tests.smtp_server import Inbox, smtp_server

PUBLIC = "https://horarium.example.test/base"
ARM = "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/jc"
JOB_FAULTED = {
    "id": "0b6f7c1e-0000-4000-8000-000000000001",
    "event": "ExecutionFaulted",
    "time": "2026-07-01T10:00:00.5Z",
    "subscriptionId": "s1",
    "resourceGroup": "rg1",
    "jobCollection": "jc",
    "job": "nightly <export>",
    "jobId": f"{ARM}/jobs/nightly <export>",
    "execution": {"status": "Failed", "message": "Http request failed: 500 & <b>boom</b>"},
}
MONITOR_UP = {
    "id": "0b6f7c1e-0000-4000-8000-000000000002",
    "event": "MonitorUp",
    "time": "2026-01-15T08:30:00Z",
    "subscriptionId": "s1",
    "resourceGroup": "rg1",
    "jobCollection": "jc",
    "monitor": "backup",
    "monitorId": f"{ARM}/monitors/backup",
    "status": "Up",
    "previousStatus": "Down",
    "reason": "a success check-in",
}


def test_each_webhook_body_has_its_services_shape_and_names_everything() -> None:
    about = channels.facts(JOB_FAULTED, "W. Europe Standard Time", PUBLIC)
    assert about.time == "2026-07-01T12:00:00+02:00 (Europe/Berlin)"  # summer time
    link = f"{PUBLIC}/ui/#/job/rg1/jc/nightly%20%3Cexport%3E"
    assert about.link == link
    for kind in ("slack", "teams", "pagerduty"):
        payload = json.loads(channels.render(kind, about, JOB_FAULTED, "R" * 32))
        check(kind, payload)
        text = json.dumps(payload)
        assert "ExecutionFaulted" in text and "Europe/Berlin" in text and link in text
        assert "boom" in text and "rg1/jc" in text
    slack = channels.slack(about)
    assert "&lt;b&gt;boom&lt;/b&gt;" in slack["text"] and "<b>" not in json.dumps(slack)
    event = channels.pagerduty(about, JOB_FAULTED, "R" * 32)
    assert event["event_action"] == "trigger" and event["payload"]["severity"] == "error"
    assert event["dedup_key"] == JOB_FAULTED["jobId"].lower()
    assert event["payload"]["timestamp"] == JOB_FAULTED["time"]

    up = channels.facts(MONITOR_UP, None, None)  # no zone: UTC; no --public-url: no link
    assert up.time == "2026-01-15T08:30:00Z (UTC)" and up.link is None
    resolve = channels.pagerduty(up, MONITOR_UP, "R" * 32)
    check("pagerduty", resolve)
    assert resolve["event_action"] == "resolve"
    assert resolve["dedup_key"] == MONITOR_UP["monitorId"].lower()
    for kind in ("slack", "teams"):
        check(kind, json.loads(channels.render(kind, up, MONITOR_UP, None)))


def test_long_messages_and_ids_stay_within_the_services_limits() -> None:
    body = {**JOB_FAULTED, "execution": {"message": "x" * 5000}, "job": "j" * 100}
    body["jobId"] = f"{ARM}{'/g' * 150}/jobs/{'j' * 100}"
    about = channels.facts(body, "Asia/Tokyo", PUBLIC)
    for kind in ("slack", "teams", "pagerduty"):
        check(kind, json.loads(channels.render(kind, about, body, "k")))
    assert len(channels.dedup_key(about)) <= 255


def test_the_mail_has_a_text_and_an_html_part_with_the_same_facts() -> None:
    about = channels.facts(JOB_FAULTED, "Europe/Paris", PUBLIC)
    message = channels.email(about, "horarium@example.com", ["a@example.com"], JOB_FAULTED["id"])
    assert message["Subject"] == "[Horarium] ExecutionFaulted: job jc/nightly <export>"
    plain, rich = _parts(message)
    assert "Time: 2026-07-01T12:00:00+02:00 (Europe/Paris)" in plain and about.link in plain
    assert "&lt;b&gt;boom&lt;/b&gt;" in rich and "<b>boom" not in rich
    for label, _ in about.pairs():
        assert label in plain and label in rich


def _parts(message: EmailMessage) -> tuple[str, str]:
    plain = message.get_body(("plain",))
    rich = message.get_body(("html",))
    assert plain is not None and rich is not None
    return str(plain.get_content()), str(rich.get_content())


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"format": "sms", "events": ["JobFaulted"]}, "[0].format:"),
        ({"events": ["JobFaulted"], "email": {"to": []}}, "[0].email.to:"),
        ({"events": ["JobFaulted"], "email": {"to": ["a@b.c"] * 11}}, "[0].email.to:"),
        ({"events": ["JobFaulted"], "email": {"to": ["Ops <a@b.c>"]}}, "[0].email.to[0]:"),
        ({"events": ["JobFaulted"], "email": {"to": [f"{'a' * 250}@b.c"]}}, "[0].email.to[0]:"),
        ({"events": ["JobFaulted"], "email": {"to": ["a@b.c", "A@b.c"]}}, "[0].email.to[1]:"),
        ({"events": ["JobFaulted"], "email": {"to": ["a@b.c"], "cc": []}}, "[0].email.cc:"),
        ({"format": "slack", "events": ["JobFaulted"], "uri": "ftp://x/"}, "[0].uri:"),
        ({"format": "slack", "events": ["JobFaulted"], "uri": "https://x/", "secret": "s"},
         "[0].secret:"),
        ({"format": "pagerduty", "events": ["ExecutionSkipped"], "routingKey": "k"},
         "[0].events[0]:"),
        ({"format": "teams", "events": ["JobFaulted"], "email": {"to": ["a@b.c"]}}, "[0].email:"),
    ],
)  # fmt: skip
def test_bad_channels_are_refused_naming_the_field(given: dict[str, Any], field: str) -> None:
    with pytest.raises(BadRequest) as refused:
        keep_secrets(parse_notifications([given], "p"), [], "p")
    assert str(refused.value.message).startswith("p" + field), refused.value.message


def test_a_channels_secret_is_never_shown_and_kept_only_for_its_own_channel() -> None:
    hooks = [
        {"format": "slack", "events": ["JobFaulted"], "uri": "https://hooks.example/T/B/one"},
        {"format": "slack", "events": ["JobFaulted"], "uri": "https://hooks.example/T/B/two"},
        {"format": "pagerduty", "events": ["JobFaulted"], "routingKey": "R" * 32},
        {"events": ["JobFaulted"], "email": {"to": ["ops@example.com"]}},
    ]
    stored = keep_secrets(parse_notifications(hooks, "p"), [], "p")
    answered = shown(stored)
    assert "one" not in json.dumps(answered) and "R" * 32 not in json.dumps(answered)
    assert answered[0] == {
        "format": "slack",
        "events": ["JobFaulted"],
        "uri": "https://hooks.example/***",
    }
    assert answered[3] == {"format": "email", "events": ["JobFaulted"], "email": hooks[3]["email"]}
    kept = keep_secrets(parse_notifications(answered, "p"), stored, "p")
    assert [n.get("secret") for n in kept] == [n.get("secret") for n in stored]
    # Swapped, each masked slack uri keeps the secret of the one at its position.
    swapped = keep_secrets(parse_notifications(answered[1::-1], "p"), stored, "p")
    assert [n["secret"] for n in swapped] == [stored[0]["secret"], stored[1]["secret"]]
    # A routing key is not taken for another format's secret.
    other = [{"events": ["JobFaulted"], "uri": "https://events.pagerduty.com/v2/enqueue"}]
    with pytest.raises(BadRequest, match=r"^p\[0\]\.secret: required"):
        keep_secrets(parse_notifications(other, "p"), stored[2:], "p")


def test_smtp_url_is_checked_without_showing_its_password() -> None:
    server = parse_smtp_url("smtp://ops%40x:p%3Ass@mail.example.com")
    assert (server.host, server.port, server.tls) == ("mail.example.com", 25, False)
    assert (server.username, server.password) == ("ops@x", "p:ss")
    assert server.shown == "smtp://mail.example.com:25"
    assert parse_smtp_url("smtps://mail.example.com").port == 465
    for bad in ("http://mail", "smtp://", "smtp://u:pw@h/path", "smtp://:pw@h"):
        with pytest.raises(ValueError, match=r"^--smtp-url") as refused:
            parse_smtp_url(bad)
        assert "pw" not in str(refused.value)
    [warning] = smtp_warnings("smtp://u:secret-pw@mail.example.com:587")
    assert "STARTTLS" in warning and "secret-pw" not in warning
    assert smtp_warnings("smtps://u:pw@mail.example.com") == []
    assert smtp_warnings("smtp://u:pw@127.0.0.1:2525") == []  # loopback: nothing travels


# -- a real SMTP server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server("ops", "pw!") as found:
        yield found


def test_the_mailer_logs_in_and_sends_one_message(smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    policy_ = OutboundPolicy.parse(("link-local",))
    about = channels.facts(MONITOR_UP, "America/New_York", PUBLIC)

    async def send(url: str) -> Any:
        mailer = Mailer(url, "horarium@example.com", policy_, 10)
        return await mailer.send(channels.email(about, mailer.sender, ["a@example.com"], "d1"))

    sent = asyncio.run(send(f"smtp://ops:pw%21@127.0.0.1:{port}"))
    assert sent.ok, sent.detail
    [envelope] = inbox.envelopes
    assert envelope.rcpt_tos == ["a@example.com"] and envelope.mail_from == "horarium@example.com"
    received = message_from_bytes(bytes(envelope.content or b""), policy=policy.default)
    assert received["Subject"] == "[Horarium] MonitorUp: monitor jc/backup"
    assert received.get_content_type() == "multipart/alternative"
    assert "2026-01-15T03:30:00-05:00 (America/New_York)" in str(received)

    wrong = asyncio.run(send(f"smtp://ops:wrong@127.0.0.1:{port}"))
    assert not wrong.ok and "refused the login" in wrong.detail and "wrong" not in wrong.detail
    denied = Mailer(f"smtp://127.0.0.1:{port}", None, OutboundPolicy.parse(("127.0.0.0/8",)), 5)
    refused = asyncio.run(denied.send(channels.email(about, denied.sender, ["a@x.io"], "d2")))
    assert not refused.ok and refused.final and "outbound policy" in refused.detail
    assert len(inbox.envelopes) == 1


# -- TLS: STARTTLS and smtps against a server whose certificate a private CA signed ---------------


def _server_tls(pki: Pki, folder: Path) -> ssl.SSLContext:
    """The SMTP server's side: the test CA's certificate for 127.0.0.1, no client certificate."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "server.pem")
    return context


def _mail_one(url: str) -> Any:
    about = channels.facts(MONITOR_UP, "UTC", PUBLIC)
    mailer = Mailer(url, "horarium@example.com", OutboundPolicy.parse(("link-local",)), 10)
    return asyncio.run(mailer.send(channels.email(about, mailer.sender, ["a@example.com"], "t")))


@pytest.mark.parametrize("scheme", ["smtp", "smtps"])
def test_mail_travels_over_tls_to_a_server_the_trust_store_vouches_for(
    scheme: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """smtp:// upgrades with STARTTLS (this server requires it, also before the login) and
    smtps:// speaks TLS from the start; the certificate is checked against the trust store,
    which an operator extends with SSL_CERT_FILE."""
    pki = make_pki(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca_file))
    tls = _server_tls(pki, tmp_path)
    with smtp_server("ops", "pw", tls=tls, implicit_tls=scheme == "smtps") as (inbox, port):
        sent = _mail_one(f"{scheme}://ops:pw@127.0.0.1:{port}")
        assert sent.ok, sent.detail
        assert inbox.encrypted == [True]
        [(recipients, message)] = inbox.messages()
        assert recipients == ["a@example.com"] and "MonitorUp" in message["Subject"]


@pytest.mark.parametrize("scheme", ["smtp", "smtps"])
def test_mail_is_not_sent_to_a_server_whose_certificate_is_not_trusted(
    scheme: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pki = make_pki(tmp_path)  # SSL_CERT_FILE unset: the test CA is no one's
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    tls = _server_tls(pki, tmp_path)
    with smtp_server("ops", "secret-pw", tls=tls, implicit_tls=scheme == "smtps") as (inbox, port):
        sent = _mail_one(f"{scheme}://ops:secret-pw@127.0.0.1:{port}")
        assert not sent.ok and not sent.final  # retried: the operator may fix the trust store
        assert "certificate" in sent.detail.lower(), sent.detail
        assert "secret-pw" not in sent.detail
        assert inbox.envelopes == []
