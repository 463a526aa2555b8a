"""Job collections on the wire: request bodies into canonical values, stored rows into responses.

Stored: `location` (display name), `sku` and `state` in their columns; `tags`, `quota` and the
extensions (`pause`, `notifications`) in the row's `document` as
``{"tags": {...}, "quota": {...}, …}`` (each only when given).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horarium.model import enums
from horarium.model.errors import BadRequest
from horarium.model.fields import integer, obj, string_map, text
from horarium.model.keys import MapOf, Shape, canonical_keys
from horarium.model.locations import display_name
from horarium.model.names import COLLECTION_TYPE, CollectionName
from horarium.model.notifications import NOTIFICATIONS, parse_notifications
from horarium.model.notifications import SHAPE as NOTIFICATIONS_SHAPE
from horarium.model.notifications import shown as shown_notifications
from horarium.model.pause import PAUSE, parse_pause, require_disabled, shown, without_since
from horarium.model.pause import SHAPE as PAUSE_SHAPE

MAX_TAGS = 50

QUOTA_SHAPE: dict[str, Shape] = {
    "maxJobCount": None,
    "maxJobOccurrence": None,
    "maxRecurrence": {"frequency": None, "interval": None},
}
BODY_SHAPE: dict[str, Shape] = {
    "id": None,
    "type": None,
    "name": None,
    "location": None,
    "tags": MapOf(None),
    "properties": {
        "sku": {"name": None},
        "state": None,
        "quota": QUOTA_SHAPE,
        "pause": PAUSE_SHAPE,
        "notifications": NOTIFICATIONS_SHAPE,
    },
}


@dataclass(frozen=True)
class CollectionInput:
    location: str | None
    tags: dict[str, str] | None
    sku: str
    state: str
    quota: dict[str, Any] | None
    pause: dict[str, Any] | None = None  # canonical; `since` is set by the API (model.pause)
    # canonical; a secret None is kept from the stored one (model.notifications.keep_secrets)
    notifications: list[dict[str, Any]] | None = None

    @property
    def document(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.tags is not None:
            out["tags"] = self.tags
        if self.quota is not None:
            out["quota"] = self.quota
        if self.pause is not None:
            out[PAUSE] = self.pause
        if self.notifications:
            out[NOTIFICATIONS] = self.notifications
        return out


def shaped(body: Any) -> dict[str, Any]:
    """A collection request body with property names spelled canonically."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    out = canonical_keys(body, BODY_SHAPE)
    assert isinstance(out, dict)
    return out


def stored_body(
    location: str | None, sku: str, state: str, document: dict[str, Any]
) -> dict[str, Any]:
    """A stored collection as a request body again, the base a PATCH is merged onto."""
    properties: dict[str, Any] = {"sku": {"name": sku}, "state": state}
    if document.get("quota") is not None:
        properties["quota"] = document["quota"]
    if document.get(PAUSE) is not None:
        properties[PAUSE] = without_since(document[PAUSE])
    if document.get(NOTIFICATIONS):
        properties[NOTIFICATIONS] = shown_notifications(document[NOTIFICATIONS])
    body: dict[str, Any] = {"properties": properties}
    if location is not None:
        body["location"] = location
    if document.get("tags") is not None:
        body["tags"] = document["tags"]
    return body


def parse_collection(body: dict[str, Any]) -> CollectionInput:
    """Validate a key-canonical collection body."""
    location = text(body, "location", "location", max_len=100)
    tags = string_map(body, "tags", "") if body.get("tags") is not None else None
    if tags is not None:
        _check_tags(tags)
    properties = body.get("properties")
    if properties is None:
        raise BadRequest("properties: required (at least properties.sku.name)")
    properties = obj(properties, "properties")
    sku_obj = properties.get("sku")
    if sku_obj is None:
        raise BadRequest(f"properties.sku: required (name: one of {', '.join(enums.SKUS)})")
    sku_obj = obj(sku_obj, "properties.sku")
    if sku_obj.get("name") is None:
        raise BadRequest(f"properties.sku.name: required (one of {', '.join(enums.SKUS)})")
    given = sku_obj["name"]
    if isinstance(given, str) and given.strip().lower() == "premium":
        given = "P10Premium"  # the 2016-01-01 API's name for it
    sku = enums.parse(given, enums.SKUS, "properties.sku.name")
    state = "Enabled"
    if properties.get("state") is not None:
        state = enums.parse(properties["state"], enums.COLLECTION_STATES, "properties.state")
        if state not in enums.SETTABLE_COLLECTION_STATES:
            raise BadRequest(
                f"properties.state: {state} cannot be set"
                f" (one of {', '.join(enums.SETTABLE_COLLECTION_STATES)}; DELETE removes a"
                " collection)"
            )
    quota = None
    if properties.get("quota") is not None:
        quota = _parse_quota(obj(properties["quota"], "properties.quota"))
    pause = None
    if properties.get(PAUSE) is not None:
        pause = parse_pause(properties[PAUSE], "properties.pause")
        require_disabled(pause, state, "properties.pause", "collection")
    notifications = None
    if properties.get(NOTIFICATIONS) is not None:
        notifications = parse_notifications(properties[NOTIFICATIONS], "properties.notifications")
    return CollectionInput(
        location=display_name(location.strip()) if location and location.strip() else None,
        tags=tags,
        sku=sku,
        state=state,
        quota=quota,
        pause=pause,
        notifications=notifications,
    )


def _check_tags(tags: dict[str, str]) -> None:
    if len(tags) > MAX_TAGS:
        raise BadRequest(f"tags: at most {MAX_TAGS} tags ({len(tags)} given)")
    for name, value in tags.items():
        if not name or len(name) > 512:
            raise BadRequest(f"tags: the name {name[:40]!r} must have 1 to 512 characters")
        if len(value) > 256:
            raise BadRequest(f"tags.{name}: at most 256 characters")


def _parse_quota(quota: dict[str, Any]) -> dict[str, Any]:
    path = "properties.quota"
    out: dict[str, Any] = {}
    count = integer(quota, "maxJobCount", path, minimum=1, maximum=1_000_000)
    if count is not None:
        out["maxJobCount"] = count
    occurrence = integer(quota, "maxJobOccurrence", path, minimum=1, maximum=1_000_000_000)
    if occurrence is not None:
        out["maxJobOccurrence"] = occurrence
    if quota.get("maxRecurrence") is not None:
        where = f"{path}.maxRecurrence"
        raw = obj(quota["maxRecurrence"], where)
        recurrence: dict[str, Any] = {}
        if raw.get("frequency") is None:
            raise BadRequest(f"{where}.frequency: required (one of {', '.join(enums.FREQUENCIES)})")
        recurrence["frequency"] = enums.parse(
            raw["frequency"], enums.FREQUENCIES, f"{where}.frequency"
        )
        interval = integer(raw, "interval", where, minimum=1, maximum=1000)
        if interval is not None:
            recurrence["interval"] = interval
        out["maxRecurrence"] = recurrence
    return out


def render_collection(
    name: CollectionName,
    *,
    location: str | None,
    sku: str,
    state: str,
    document: dict[str, Any],
) -> dict[str, Any]:
    """The collection as the live service returned it (property order included)."""
    out: dict[str, Any] = {"id": name.arm_id, "type": COLLECTION_TYPE, "name": name.name}
    if location is not None:
        out["location"] = location
    if document.get("tags") is not None:
        out["tags"] = document["tags"]
    properties: dict[str, Any] = {"sku": {"name": sku}, "state": state}
    quota = document.get("quota")
    if quota is not None:
        rendered = {k: quota[k] for k in ("maxJobCount", "maxJobOccurrence") if k in quota}
        if "maxRecurrence" in quota:
            recurrence = quota["maxRecurrence"]
            rendered["maxRecurrence"] = {"frequency": enums.camel(recurrence["frequency"])}
            if "interval" in recurrence:
                rendered["maxRecurrence"]["interval"] = recurrence["interval"]
        properties["quota"] = rendered
    if document.get(PAUSE) is not None:  # Horarium extension
        properties[PAUSE] = shown(document[PAUSE])
    if document.get(NOTIFICATIONS):  # Horarium extension; secrets are never shown
        properties[NOTIFICATIONS] = shown_notifications(document[NOTIFICATIONS])
    out["properties"] = properties
    return out
