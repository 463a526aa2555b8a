"""Notifications (Horarium extension): a collection's `properties.notifications`, a list of
``{"events": [...], "uri": "https://…", "secret": "…"}``. The engine POSTs each event of the
collection's jobs and check-in monitors that a notification lists to its `uri`, signed with an
HMAC-SHA256 of the body under its `secret` (`docs/engine.md`, "Notifications").

Stored in the collection's document in canonical form (event names spelled as below, in the
order given), the secret sealed by the store (`store.resources.collections`). On the wire the
secret is never shown: a PUT or PATCH that leaves it out, or sends `***`, keeps the stored one of
the notification with the same `uri` (or, at the same position, the same scheme, host and port);
otherwise it is required again.
"""

from __future__ import annotations

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

MAX_NOTIFICATIONS = 10
MAX_URI = 2048
MAX_SECRET = 1024
SHAPE: Shape = ListOf({"events": None, "uri": None, "secret": None})
_FIELDS = ("events", "uri", "secret")


def parse_notifications(raw: Any, path: str) -> list[dict[str, Any]]:
    """Requested notifications in canonical form; a `secret` left out or sent as `***` is None
    (to be kept from the stored notification, `keep_secrets`)."""
    if not isinstance(raw, list):
        raise BadRequest(f"{path}: must be a list of {{events, uri, secret}} objects")
    if len(raw) > MAX_NOTIFICATIONS:
        raise BadRequest(f"{path}: at most {MAX_NOTIFICATIONS} notifications ({len(raw)} given)")
    return [_parse_one(item, f"{path}[{i}]") for i, item in enumerate(raw)]


def _parse_one(item: Any, path: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise BadRequest(f"{path}: must be a JSON object (events, uri, secret)")
    unknown = sorted(set(item) - set(_FIELDS))
    if unknown:
        raise BadRequest(
            f"{path}.{unknown[0]}: unknown property (a notification has events, uri, secret)"
        )
    return {
        "events": _events(item.get("events"), f"{path}.events"),
        "uri": _uri(item.get("uri"), f"{path}.uri"),
        "secret": _secret(item.get("secret"), f"{path}.secret"),
    }


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
        if notification["secret"] is not None:
            out.append(notification)
            continue
        found = next((s for s in stored if s.get("uri") == notification["uri"]), None)
        if found is None and i < len(stored):
            at = stored[i]
            if isinstance(at.get("uri"), str) and origin(at["uri"]) == origin(notification["uri"]):
                found = at
        if found is None or found.get("secret") is None:
            raise BadRequest(
                f"{path}[{i}].secret: required, a non-empty string (a stored secret is kept"
                " only for the same uri, or the same scheme, host and port at the same"
                " position)"
            )
        out.append({**notification, "secret": found["secret"]})
    return out


def event_bits(notifications: Sequence[Mapping[str, Any]] | None) -> int:
    """The events any of `notifications` lists, as bits (`BITS`)."""
    bits = 0
    for notification in notifications or ():
        for event in notification.get("events", ()):
            bits |= BITS.get(event, 0)
    return bits


def shown(notifications: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The notifications as GET shows them: without their secrets."""
    return [{"events": list(n["events"]), "uri": n["uri"]} for n in notifications]
