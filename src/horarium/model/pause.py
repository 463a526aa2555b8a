"""Pausing (Horarium extension): `properties.pause: {"until": …, "reason": …}` on a Disabled job
or collection, which the engine enables again by itself at `until` (`store.runs.pauses`).

Stored canonically as ``{"until": "…Z", "reason": "…", "since": "…Z"}``: `since` is when the
pause began (the write that set it; kept while a pause is only changed), from which the
executions that fell due meanwhile are counted when it ends. `since` is not shown on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from horarium.model import datetimes
from horarium.model.errors import BadRequest
from horarium.model.fields import obj, text
from horarium.model.keys import Shape

PAUSE = "pause"  # the property, in a job's definition and a collection's document
MAX_REASON = 500
SHAPE: dict[str, Shape] = {"until": None, "reason": None}


def parse_pause(raw: Any, path: str) -> dict[str, Any]:
    """A requested pause in canonical form (without `since`)."""
    given = obj(raw, path)
    unknown = sorted(set(given) - {"until", "reason"})
    if unknown:
        raise BadRequest(f"{path}.{unknown[0]}: unknown property (a pause has until and reason)")
    if given.get("until") is None:
        raise BadRequest(f"{path}.until: required (when the pause ends, an ISO 8601 instant)")
    until = datetimes.parse(given["until"], f"{path}.until")
    if until.tzinfo is None:
        until = until.replace(tzinfo=UTC)
    out: dict[str, Any] = {"until": datetimes.format_instant(until)}
    reason = text(given, "reason", path, max_len=MAX_REASON)
    if reason is not None:
        out["reason"] = reason
    return out


def require_disabled(pause: Any, state: str, path: str, what: str) -> None:
    """Only a Disabled job or collection can be paused."""
    if pause is not None and state != "Disabled":
        raise BadRequest(
            f"{path}: only a Disabled {what} can be paused ({what} state would be {state});"
            f" send state Disabled with the pause, or leave the pause out"
        )


def begun(pause: dict[str, Any] | None, before: Mapping[str, Any] | None, now: datetime) -> Any:
    """`pause` with its `since`: the stored pause's when one was already set, else `now`."""
    if pause is None:
        return None
    since = before.get("since") if isinstance(before, Mapping) else None
    return {**pause, "since": since or datetimes.format_instant(now)}


def until_of(pause: Any) -> datetime | None:
    """The instant a stored pause ends (the indexed `paused_until` column)."""
    if not isinstance(pause, Mapping) or pause.get("until") is None:
        return None
    return _instant(pause["until"])


def since_of(pause: Mapping[str, Any], default: datetime) -> datetime:
    """When a stored pause began."""
    value = pause.get("since")
    return _instant(value) if value is not None else default


def shown(pause: Any) -> dict[str, Any] | None:
    """A stored pause as the API shows it."""
    if not isinstance(pause, Mapping):
        return None
    return {k: pause[k] for k in ("until", "reason") if k in pause}


def without_since(pause: Any) -> Any:
    """A stored pause as the base a PATCH is merged onto."""
    return shown(pause) if pause is not None else None


def _instant(value: str) -> datetime:
    parsed = datetimes.parse(value, "pause.until")
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
