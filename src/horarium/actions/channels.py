"""What a notification says on each channel (`docs/engine.md`, "Notifications"): the event's
JSON (the outbox row's body, the `horarium` format as it is sent) rendered at delivery as a
Slack incoming-webhook message, a Microsoft Teams incoming-webhook message with an Adaptive Card,
a PagerDuty Events API v2 event, or an e-mail (plain text and HTML, the same contents).

Each names the event, the resource (job or check-in monitor, with its collection), the time in
the resource's zone (its recurrence's `timeZone`, else UTC), the last message (the execution's,
or the monitor's reason) and, with `--public-url`, a link to the dashboard page."""

from __future__ import annotations

import hashlib
import html
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any
from urllib.parse import quote

from horarium.model.notifications import (
    EXECUTION_FAULTED,
    JOB_FAULTED,
    MONITOR_DOWN,
    PAGERDUTY,
    RESOLVES,
    SLACK,
    TEAMS,
)
from horarium.recurrence.zones import find_zone

MAX_MESSAGE = 1000  # characters of the last message a channel shows
MAX_SUMMARY = 1024  # PagerDuty's limit on payload.summary
MAX_DEDUP = 255  # PagerDuty's limit on dedup_key
SOURCE = "Horarium"


@dataclass(frozen=True)
class Facts:
    """What every channel tells of one event."""

    event: str
    kind: str  # "job" or "monitor"
    name: str
    collection: str
    resource_group: str
    resource_id: str
    time: str  # in the resource's zone, e.g. 2026-03-01T09:00:00+01:00 (Europe/Paris)
    utc: str  # the body's `time`
    message: str
    status: str | None  # a monitor's new status, a faulted job's state
    link: str | None

    @property
    def title(self) -> str:
        return f"{self.event}: {self.kind} {self.collection}/{self.name}"

    def pairs(self) -> list[tuple[str, str]]:
        """(label, value) of the facts, in the order every channel shows them."""
        out = [
            ("Event", self.event),
            (self.kind.capitalize(), self.name),
            ("Collection", f"{self.resource_group}/{self.collection}"),
            ("Time", self.time),
        ]
        if self.status:
            out.append(("Status", self.status))
        if self.message:
            out.append(("Message", self.message))
        return out


def facts(body: dict[str, Any], zone: str | None, public_url: str | None) -> Facts:
    """The facts of an outbox row's body; `zone`: the resource's recurrence time zone."""
    monitor = "monitor" in body
    kind = "monitor" if monitor else "job"
    name = str(body.get(kind, ""))
    collection = str(body.get("jobCollection", ""))
    group = str(body.get("resourceGroup", ""))
    utc = str(body.get("time", ""))
    return Facts(
        event=str(body.get("event", "")),
        kind=kind,
        name=name,
        collection=collection,
        resource_group=group,
        resource_id=str(body.get("monitorId" if monitor else "jobId", "")),
        time=local_time(utc, zone),
        utc=utc,
        message=_cut(_message(body), MAX_MESSAGE),
        status=body.get("status") if monitor else body.get("state"),
        link=_link(public_url, kind, group, collection, name),
    )


def local_time(utc: str, zone: str | None) -> str:
    """`utc` (ISO 8601) in `zone` (IANA or Windows name; unknown or None: UTC), with the zone's
    name."""
    try:
        instant = datetime.fromisoformat(utc)
    except ValueError:
        return utc
    found = find_zone(zone) if zone else None
    if found is None:
        return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") + " (UTC)"
    return f"{instant.astimezone(found).isoformat(timespec='seconds')} ({found.key})"


def _message(body: dict[str, Any]) -> str:
    if "monitor" in body:
        return str(body.get("reason") or "")
    execution = body.get("execution")
    if isinstance(execution, dict) and execution.get("message"):
        return str(execution["message"])
    listed = body.get("executions")
    if isinstance(listed, list) and listed and isinstance(listed[-1], dict):
        return f"{body.get('count', len(listed))} executions: {listed[-1].get('message', '')}"
    return ""


def _link(public_url: str | None, kind: str, group: str, collection: str, name: str) -> str | None:
    """The dashboard page of the job (or, for a monitor, of its collection)."""
    if not public_url:
        return None
    parts = [group, collection] + ([name] if kind == "job" else [])
    page = "job" if kind == "job" else "jobs"
    return f"{public_url.rstrip('/')}/ui/#/{page}/{'/'.join(quote(p, safe='') for p in parts)}"


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


# -- the webhooks' bodies ------------------------------------------------------------------------


def render(kind: str, about: Facts, body: dict[str, Any], secret: str | None) -> bytes:
    """The JSON a `slack`, `teams` or `pagerduty` channel is sent (`secret`: the routing key)."""
    if kind == SLACK:
        payload = slack(about)
    elif kind == TEAMS:
        payload = teams(about)
    elif kind == PAGERDUTY:
        payload = pagerduty(about, body, secret or "")
    else:
        raise ValueError(f"no webhook format {kind!r}")
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _mrkdwn(text: str) -> str:
    """Slack's escaping of &, < and > (https://api.slack.com/reference/surfaces/formatting)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack(about: Facts) -> dict[str, Any]:
    """A Slack incoming-webhook message: `text` (the notification's fallback) and blocks."""
    fields = [
        {"type": "mrkdwn", "text": f"*{label}*\n{_mrkdwn(value)}"}
        for label, value in about.pairs()
        if label != "Message"
    ]
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(about.title, 150)}},
        {"type": "section", "fields": fields[:10]},
    ]
    if about.message:
        blocks.append(
            {"type": "section", "text": {"type": "mrkdwn", "text": _mrkdwn(about.message)}}
        )
    if about.link:
        button = {
            "type": "button",
            "text": {"type": "plain_text", "text": "Open in Horarium"},
            "url": about.link,
        }
        blocks.append({"type": "actions", "elements": [button]})
    text = f"{about.title} at {about.time}"
    if about.message:
        text += f": {about.message}"
    return {"text": _mrkdwn(text), "blocks": blocks}


def teams(about: Facts) -> dict[str, Any]:
    """A Teams incoming-webhook message: one Adaptive Card attachment."""
    card: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {
                "type": "TextBlock",
                "text": about.title,
                "weight": "Bolder",
                "size": "Medium",
                "wrap": True,
                "color": "Good" if about.event in RESOLVES else "Attention",
            },
            {
                "type": "FactSet",
                "facts": [
                    {"title": label, "value": value}
                    for label, value in about.pairs()
                    if label != "Message"
                ],
            },
        ],
    }
    if about.message:
        card["body"].append({"type": "TextBlock", "text": about.message, "wrap": True})
    if about.link:
        card["actions"] = [
            {"type": "Action.OpenUrl", "title": "Open in Horarium", "url": about.link}
        ]
    return {
        "type": "message",
        "attachments": [
            {
                "contentType": "application/vnd.microsoft.card.adaptive",
                "contentUrl": None,
                "content": card,
            }
        ],
    }


def dedup_key(about: Facts) -> str:
    """One PagerDuty alert per job or monitor: its resource id (a digest past 255 characters)."""
    key = about.resource_id.lower()
    if len(key) <= MAX_DEDUP:
        return key
    return "horarium:" + hashlib.sha256(key.encode()).hexdigest()


def severity(event: str) -> str:
    if event in (MONITOR_DOWN, JOB_FAULTED):
        return "critical"
    if event == EXECUTION_FAULTED:
        return "error"
    return "warning"


def pagerduty(about: Facts, body: dict[str, Any], routing_key: str) -> dict[str, Any]:
    """An Events API v2 event: `resolve` on MonitorUp and JobRecovered, else `trigger`."""
    action = "resolve" if about.event in RESOLVES else "trigger"
    out: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": action,
        "dedup_key": dedup_key(about),
        "payload": {
            "summary": _cut(f"{about.title} at {about.time}: {about.message}", MAX_SUMMARY),
            "source": f"{SOURCE} {about.resource_group}/{about.collection}",
            "severity": "info" if action == "resolve" else severity(about.event),
            "timestamp": about.utc,
            "component": about.name,
            "group": about.collection,
            "class": about.event,
            "custom_details": {**dict(about.pairs()), "resourceId": about.resource_id},
        },
        "client": SOURCE,
    }
    if about.link:
        out["client_url"] = about.link
        out["links"] = [{"href": about.link, "text": "Open in Horarium"}]
    return out


# -- e-mail --------------------------------------------------------------------------------------


def email(about: Facts, sender: str, to: list[str], delivery: str) -> EmailMessage:
    """One message: plain text and HTML with the same contents; the subject names the event."""
    message = EmailMessage()
    message["Subject"] = f"[Horarium] {about.title}"
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Date"] = formatdate(localtime=False, usegmt=True)
    domain = sender.rpartition("@")[2] or "horarium.invalid"
    message["Message-ID"] = make_msgid(idstring=delivery[:40] or None, domain=domain)
    message["X-Horarium-Event"] = about.event
    message["X-Horarium-Delivery"] = delivery
    lines = [about.title, ""]
    lines += [f"{label}: {value}" for label, value in about.pairs()]
    if about.link:
        lines += ["", f"Open in Horarium: {about.link}"]
    message.set_content("\n".join(lines) + "\n")
    rows = "".join(
        f"<tr><th align='left' valign='top'>{html.escape(label)}</th>"
        f"<td>{html.escape(value)}</td></tr>"
        for label, value in about.pairs()
    )
    link = (
        f"<p><a href='{html.escape(about.link, quote=True)}'>Open in Horarium</a></p>"
        if about.link
        else ""
    )
    message.add_alternative(
        f"<html><body><h2>{html.escape(about.title)}</h2><table>{rows}</table>{link}"
        "</body></html>\n",
        subtype="html",
    )
    return message
