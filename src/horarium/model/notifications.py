"""Notifications (Horarium extension): a collection's `properties.notifications`, a list of
channels, each with the `events` it is sent (`docs/engine.md`, "Notifications"):

- `format` `horarium` (the default, never shown): ``{"events": [...], "uri": "https://…",
  "secret": "…"}``, the event's JSON POSTed to `uri`, signed with an HMAC-SHA256 of the body under
  `secret`;
- `slack` / `teams`: ``{"format": "slack", "events": [...], "uri": "https://hooks…"}``, a
  message POSTed to an incoming webhook. Such a URL is its own credential: the whole `uri` is the
  channel's secret, shown as its origin and `/***` only;
- `pagerduty`: ``{"format": "pagerduty", "events": [...], "routingKey": "…", "uri": …}``, an
  Events API v2 event (`uri` defaults to PagerDuty's enqueue endpoint); `routingKey` is the
  secret;
- `email`: ``{"events": [...], "email": {"to": ["ops@example.com"]}}`` (`format` `email` may be
  given), a mail through the service's SMTP server (`--smtp-url`).

Stored in the collection's document in canonical form (event names spelled as below, in the
order given; `format` only when not `horarium`), every channel's secret in `secret` (the HMAC
key, the webhook URL, the routing key), sealed by the store (`store.resources.collections`). On
the wire a secret is never shown: a PUT or PATCH that leaves it out, or sends `***` (for
`slack` / `teams`: the `uri` as shown), keeps the stored one of the notification of the same
format with the same `uri` (or, at the same position, the same scheme, host and port);
otherwise it is required again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from horarium.model.errors import BadRequest
from horarium.model.keys import ListOf, Shape
from horarium.model.secrets import MASK

NOTIFICATIONS = "notifications"  # the property, in a collection's properties and document

# The events, each one bit of a collection's `notify_events` column (what the engine's claim
# reads, so that a collection without notifications costs nothing more).
EXECUTION_FAULTED = "ExecutionFaulted"
JOB_FAULTED = "JobFaulted"
EXECUTION_POSTPONED = "ExecutionPostponed"
EXECUTION_SKIPPED = "ExecutionSkipped"
JOB_RECOVERED = "JobRecovered"
MONITOR_LATE = "MonitorLate"  # a check-in monitor's expected check-in is overdue
MONITOR_DOWN = "MonitorDown"
MONITOR_UP = "MonitorUp"  # a Late or Down monitor checked in its success again
EXECUTION_LATE = "ExecutionLate"  # not started executionPolicy.deadlines.startWithin late
EXECUTION_OVERRAN = "ExecutionOverran"  # not finished within deadlines.finishWithin
EVENTS = (
    EXECUTION_FAULTED,
    JOB_FAULTED,
    EXECUTION_POSTPONED,
    EXECUTION_SKIPPED,
    JOB_RECOVERED,
    MONITOR_LATE,
    MONITOR_DOWN,
    MONITOR_UP,
    EXECUTION_LATE,
    EXECUTION_OVERRAN,
)
BITS = {event: 1 << i for i, event in enumerate(EVENTS)}

# The channels' formats (`format`; `horarium` when absent).
HORARIUM = "horarium"
SLACK = "slack"
TEAMS = "teams"
PAGERDUTY = "pagerduty"
EMAIL = "email"
FORMATS = (HORARIUM, SLACK, TEAMS, PAGERDUTY, EMAIL)
WEBHOOK_FORMATS = (SLACK, TEAMS)  # the uri is the secret
PAGERDUTY_URI = "https://events.pagerduty.com/v2/enqueue"
# PagerDuty's events: these trigger an incident (one per job or monitor), these resolve it.
TRIGGERS = (
    MONITOR_DOWN,
    MONITOR_LATE,
    JOB_FAULTED,
    EXECUTION_FAULTED,
    EXECUTION_LATE,
    EXECUTION_OVERRAN,
)
RESOLVES = (MONITOR_UP, JOB_RECOVERED)

MAX_NOTIFICATIONS = 10
MAX_URI = 2048
MAX_SECRET = 1024
MAX_RECIPIENTS = 10
MAX_ADDRESS = 254  # RFC 5321's longest forward path, less its angle brackets
_ADDRESS = re.compile(r"[^@\s<>(),;:\\\"\[\]]+@[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?")
SHAPE: Shape = ListOf(
    {
        "format": None,
        "events": None,
        "uri": None,
        "secret": None,
        "routingKey": None,
        "email": {"to": None},
    }
)
_FIELDS: dict[str, tuple[str, ...]] = {
    HORARIUM: ("format", "events", "uri", "secret"),
    SLACK: ("format", "events", "uri"),
    TEAMS: ("format", "events", "uri"),
    PAGERDUTY: ("format", "events", "uri", "routingKey"),
    EMAIL: ("format", "events", "email"),
}


def format_of(notification: Mapping[str, Any]) -> str:
    """A stored (or parsed) notification's format."""
    return str(notification.get("format") or HORARIUM)


def parse_notifications(raw: Any, path: str) -> list[dict[str, Any]]:
    """Requested notifications in canonical form; a secret left out or sent as `***` is None
    (to be kept from the stored notification, `keep_secrets`)."""
    if not isinstance(raw, list):
        raise BadRequest(f"{path}: must be a list of {{events, uri, secret}} objects")
    if len(raw) > MAX_NOTIFICATIONS:
        raise BadRequest(f"{path}: at most {MAX_NOTIFICATIONS} notifications ({len(raw)} given)")
    return [_parse_one(item, f"{path}[{i}]") for i, item in enumerate(raw)]


def _parse_one(item: Any, path: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise BadRequest(f"{path}: must be a JSON object (events, uri, secret)")
    kind = _format(item, path)
    unknown = sorted(set(item) - set(_FIELDS[kind]))
    if unknown:
        raise BadRequest(
            f"{path}.{unknown[0]}: unknown property (a notification of format {kind} has"
            f" {', '.join(_FIELDS[kind])})"
        )
    events = _events(item.get("events"), f"{path}.events")
    if kind == HORARIUM:
        return {
            "events": events,
            "uri": _uri(item.get("uri"), f"{path}.uri"),
            "secret": _secret(item.get("secret"), f"{path}.secret"),
        }
    if kind in WEBHOOK_FORMATS:
        given = item.get("uri")
        if given is None or given == MASK or (isinstance(given, str) and given.endswith(_MASKED)):
            # kept from the stored one (`keep_secrets`): shown masked, or left out
            shown = given if isinstance(given, str) and given != MASK else None
            if shown is not None:
                _uri(shown.removesuffix(_MASKED) + "/", f"{path}.uri")
            return {"format": kind, "events": events, "uri": shown, "secret": None}
        uri = _uri(given, f"{path}.uri")
        return {"format": kind, "events": events, "uri": masked_uri(uri), "secret": uri}
    if kind == PAGERDUTY:
        for i, event in enumerate(events):
            if event not in TRIGGERS + RESOLVES:
                raise BadRequest(
                    f"{path}.events[{i}]: {event} is not sent to PagerDuty (format pagerduty"
                    f" takes {', '.join(TRIGGERS + RESOLVES)})"
                )
        endpoint = item.get("uri")
        return {
            "format": kind,
            "events": events,
            "uri": PAGERDUTY_URI if endpoint is None else _uri(endpoint, f"{path}.uri"),
            "secret": _secret(item.get("routingKey"), f"{path}.routingKey"),
        }
    return {"format": EMAIL, "events": events, "email": _email(item.get("email"), path)}


def _format(item: dict[str, Any], path: str) -> str:
    raw = item.get("format")
    if raw is None:
        return EMAIL if item.get("email") is not None else HORARIUM
    found = raw.strip().lower() if isinstance(raw, str) else None
    if found not in FORMATS:
        raise BadRequest(f"{path}.format: {raw!r} is not a format (one of {', '.join(FORMATS)})")
    assert found is not None
    if found != EMAIL and item.get("email") is not None:
        raise BadRequest(f"{path}.email: only a notification of format email has it")
    return found


def _email(raw: Any, path: str) -> dict[str, Any]:
    where = f"{path}.email"
    if not isinstance(raw, dict):
        raise BadRequest(f"{where}: required, an object {{to: [addresses]}}")
    unknown = sorted(set(raw) - {"to"})
    if unknown:
        raise BadRequest(f"{where}.{unknown[0]}: unknown property (email has to)")
    to = raw.get("to")
    if not isinstance(to, list) or not to:
        raise BadRequest(f"{where}.to: required, a list of 1 to {MAX_RECIPIENTS} addresses")
    if len(to) > MAX_RECIPIENTS:
        raise BadRequest(f"{where}.to: at most {MAX_RECIPIENTS} recipients ({len(to)} given)")
    out: list[str] = []
    for i, address in enumerate(to):
        if not isinstance(address, str) or not address:
            raise BadRequest(f"{where}.to[{i}]: must be an e-mail address (name@domain)")
        if len(address) > MAX_ADDRESS:
            raise BadRequest(
                f"{where}.to[{i}]: at most {MAX_ADDRESS} characters ({len(address)} given)"
            )
        if not _ADDRESS.fullmatch(address) or len(address.partition("@")[0]) > 64:
            raise BadRequest(
                f"{where}.to[{i}]: {address!r} is not an e-mail address (name@domain, the name"
                " at most 64 characters, no spaces or display name)"
            )
        if address.lower() in (a.lower() for a in out):
            raise BadRequest(f"{where}.to[{i}]: {address} is listed twice")
        out.append(address)
    return {"to": out}


_MASKED = "/" + MASK


def masked_uri(uri: str) -> str:
    """How a slack or teams webhook URL is shown and stored in clear: its origin and `/***`."""
    parts = urlsplit(uri)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2].lower()}{_MASKED}"


def _events(raw: Any, path: str) -> list[str]:
    if not isinstance(raw, list) or not raw:
        raise BadRequest(f"{path}: required, a non-empty list of {', '.join(EVENTS)}")
    out: list[str] = []
    by_lower = {e.lower(): e for e in EVENTS}
    for i, value in enumerate(raw):
        event = by_lower.get(value.lower()) if isinstance(value, str) else None
        if event is None:
            raise BadRequest(f"{path}[{i}]: {value!r} is not an event (one of {', '.join(EVENTS)})")
        if event in out:
            raise BadRequest(f"{path}[{i}]: {event} is listed twice")
        out.append(event)
    return out


def _uri(raw: Any, path: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise BadRequest(f"{path}: required, an absolute http or https URI")
    if len(raw) > MAX_URI:
        raise BadRequest(f"{path}: at most {MAX_URI} characters ({len(raw)} given)")
    try:
        parts = urlsplit(raw)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        raise BadRequest(f"{path}: {raw!r} is not an absolute http or https URI") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise BadRequest(f"{path}: {raw!r} is not an absolute http or https URI")
    if parts.fragment:
        raise BadRequest(f"{path}: must not have a fragment (#…)")
    return raw


def _secret(raw: Any, path: str) -> str | None:
    if raw is None or raw == MASK:
        return None
    if not isinstance(raw, str) or not raw:
        raise BadRequest(f"{path}: must be a non-empty string")
    if len(raw) > MAX_SECRET:
        raise BadRequest(f"{path}: at most {MAX_SECRET} characters ({len(raw)} given)")
    return raw


def origin(uri: str) -> str:
    """`scheme://host:port` of a notification's URI (what a sealed secret is bound to)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def keep_secrets(
    given: list[dict[str, Any]], stored: Sequence[Mapping[str, Any]], path: str
) -> list[dict[str, Any]]:
    """`given` (parsed) with each missing secret taken, in its stored (sealed) form, from the
    stored notification with the same uri, or else the one at the same position with the same
    origin; a secret with neither is required (400 naming the field)."""
    out: list[dict[str, Any]] = []
    for i, notification in enumerate(given):
        kind = format_of(notification)
        if kind == EMAIL or notification["secret"] is not None:
            out.append(notification)
            continue
        same = [(j, s) for j, s in enumerate(stored) if format_of(s) == kind]
        uri = notification["uri"]
        if uri is None:  # a slack or teams uri left out: the one at the same position
            found = next((s for j, s in same if j == i), None)
        else:  # the same uri, at the same position first; else the same origin there
            found = next(
                (s for j, s in sorted(same, key=lambda p: p[0] != i) if s.get("uri") == uri),
                None,
            )
            if found is None:
                found = next(
                    (
                        s
                        for j, s in same
                        if j == i
                        and isinstance(s.get("uri"), str)
                        and origin(s["uri"]) == origin(uri)
                    ),
                    None,
                )
        if found is None or found.get("secret") is None:
            field, what = _secret_field(kind)
            raise BadRequest(
                f"{path}[{i}].{field}: required, {what} (a stored one is kept only for a"
                f" notification of format {kind} with the same uri, or the same scheme, host"
                " and port at the same position)"
            )
        out.append({**notification, "uri": found["uri"], "secret": found["secret"]})
    return out


def _secret_field(kind: str) -> tuple[str, str]:
    """The wire name of a format's secret, and what it is."""
    if kind in WEBHOOK_FORMATS:
        return "uri", f"the {kind} incoming-webhook URL (an absolute https URI)"
    if kind == PAGERDUTY:
        return "routingKey", "the integration's routing key (a non-empty string)"
    return "secret", "a non-empty string"


def target_key(notification: Mapping[str, Any], secret: str | None) -> str:
    """What names a notification as a target in an outbox row's `finished`: the uri of a
    horarium one (as ever), else its format and a digest of what makes it distinct."""
    kind = format_of(notification)
    if kind == HORARIUM:
        return str(notification["uri"])
    if kind == EMAIL:
        distinct = ",".join(sorted(a.lower() for a in notification["email"]["to"]))
    else:
        distinct = f"{notification.get('uri')} {secret or ''}"
    return f"{kind}:{hashlib.sha256(distinct.encode()).hexdigest()[:16]}"


def emails(notifications: Sequence[Mapping[str, Any]] | None) -> bool:
    """Whether any of `notifications` is an email channel."""
    return any(format_of(n) == EMAIL for n in notifications or ())


def event_bits(notifications: Sequence[Mapping[str, Any]] | None) -> int:
    """The events any of `notifications` lists, as bits (`BITS`)."""
    bits = 0
    for notification in notifications or ():
        for event in notification.get("events", ()):
            bits |= BITS.get(event, 0)
    return bits


def shown(notifications: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The notifications as GET shows them: without their secrets (a slack or teams uri as its
    origin and `/***`)."""
    return [_shown(n) for n in notifications]


def _shown(notification: Mapping[str, Any]) -> dict[str, Any]:
    kind = format_of(notification)
    out: dict[str, Any] = {} if kind == HORARIUM else {"format": kind}
    out["events"] = list(notification["events"])
    if kind == EMAIL:
        out["email"] = {"to": list(notification["email"]["to"])}
    else:
        out["uri"] = notification["uri"]
    return out
