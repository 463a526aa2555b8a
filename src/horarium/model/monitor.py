"""Check-in monitors on the wire (a Horarium extension): `…/jobCollections/{c}/monitors/{n}`.

A monitor watches work Horarium does not run: its `properties.startTime` and `recurrence` (the
same fields, canonical forms and validation as a job's) name the instants a check-in is
expected; `grace` is how late one may come, `maxRuntime` how long a `start` may go without its
success. The read-only `status`, `lastCheckIn` and `nextExpected` come from the store's columns;
`pingUrl` is shown only when a token was just made (`docs/monitors.md`).

Stored (`monitors.definition`) in canonical form: `startTime`, `recurrence` (with the
calendars it lists resolved, as a job's), `grace` and `maxRuntime` as TimeSpan text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from horarium.model import datetimes, enums
from horarium.model.durations import format_timespan, parse_duration
from horarium.model.errors import BadRequest
from horarium.model.job import (
    RECURRENCE_SHAPE,
    canonical_recurrence,
    instant_text,
    render_recurrence,
)
from horarium.model.keys import canonical_keys, lookup
from horarium.model.names import check_job_name

MONITOR_TYPE = "Microsoft.Scheduler/jobCollections/monitors"
CHECK_IN_TYPE = "Microsoft.Scheduler/jobCollections/monitors/checkIns"

DEFAULT_GRACE = timedelta(minutes=5)
MAX_GRACE = timedelta(days=7)
MAX_RUNTIME = timedelta(days=7)  # the longest `maxRuntime`
MAX_MONITOR_BYTES = 16 * 1024
MONITOR_STATES = ("Enabled", "Disabled")


class MonitorStatus(StrEnum):
    NEW = "New"  # no check-in yet, and none overdue
    UP = "Up"
    LATE = "Late"  # an expected check-in is overdue, within grace
    DOWN = "Down"  # past grace, a failed check-in, or a run past maxRuntime
    PAUSED = "Paused"  # shown for a Disabled monitor (never stored)


class CheckInKind(StrEnum):
    SUCCESS = "Success"
    START = "Start"
    FAIL = "Fail"


_WRITABLE = ("startTime", "recurrence", "grace", "maxRuntime", "state")
_READ_ONLY = ("status", "lastCheckIn", "nextExpected", "pingUrl")
PROPERTIES_SHAPE: dict[str, Any] = {
    **{key: None for key in _WRITABLE + _READ_ONLY},
    "recurrence": RECURRENCE_SHAPE,
}


@dataclass(frozen=True)
class MonitorInput:
    definition: dict[str, Any]  # canonical startTime / recurrence / grace / maxRuntime
    state: str  # Enabled (the default) or Disabled


def check_monitor_name(name: str) -> str:
    """Monitor names follow the rule of job names."""
    try:
        return check_job_name(name)
    except BadRequest as error:
        raise BadRequest(
            error.message.replace("jobName", "monitorName", 1), code=error.code
        ) from None


def parse_monitor(body: Any, name: str) -> MonitorInput:
    """A monitor request body in canonical form; the timing itself is validated by the
    recurrence package, as a job's (`model.schedule.check_schedule`). Read-only properties sent
    back from a GET are ignored; any other unknown property is refused."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object with a 'properties' object.")
    given = lookup(body, "name")
    if isinstance(given, str) and given and given.split("/")[-1].lower() != name.lower():
        raise BadRequest(f"name: {given!r} does not match the monitor name in the URL ({name!r})")
    properties = lookup(body, "properties")
    if properties is None:
        raise BadRequest("properties: required")
    if not isinstance(properties, dict):
        raise BadRequest("properties: must be a JSON object")
    properties = canonical_keys(properties, PROPERTIES_SHAPE)
    unknown = sorted(k for k in properties if k not in PROPERTIES_SHAPE)
    if unknown:
        raise BadRequest(
            f"properties.{unknown[0]}: unknown property (a monitor has {', '.join(_WRITABLE)})"
        )
    if properties.get("startTime") is None and properties.get("recurrence") is None:
        raise BadRequest(
            "properties.recurrence: required (or properties.startTime alone, for one check-in"
            " expected then)"
        )
    definition: dict[str, Any] = {}
    if properties.get("startTime") is not None:
        definition["startTime"] = instant_text(properties["startTime"])
    recurrence = properties.get("recurrence")
    if recurrence is not None:
        definition["recurrence"] = canonical_recurrence(recurrence)
        if isinstance(recurrence, dict) and recurrence.get("count") is not None:
            raise BadRequest(
                "properties.recurrence.count: not used by a monitor (its check-ins are expected"
                " until recurrence.endTime)"
            )
    definition["grace"] = format_timespan(
        _duration(properties.get("grace"), "properties.grace", DEFAULT_GRACE, MAX_GRACE)
    )
    if properties.get("maxRuntime") is not None:
        runtime = _duration(properties["maxRuntime"], "properties.maxRuntime", None, MAX_RUNTIME)
        if runtime <= timedelta(0):
            raise BadRequest("properties.maxRuntime: must be longer than 0")
        definition["maxRuntime"] = format_timespan(runtime)
    state = "Enabled"
    if properties.get("state") is not None:
        state = enums.parse(properties["state"], MONITOR_STATES, "properties.state")
    size = len(json.dumps(definition, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_MONITOR_BYTES:
        raise BadRequest(
            f"properties: the monitor is {size} bytes; a monitor may be at most"
            f" {MAX_MONITOR_BYTES} (16 KB)",
            code="MonitorTooLarge",
        )
    return MonitorInput(definition, state)


def _duration(raw: Any, path: str, default: timedelta | None, most: timedelta) -> timedelta:
    if raw is None:
        assert default is not None
        return default
    value = parse_duration(raw, path)
    if value > most:
        raise BadRequest(f"{path}: at most {format_timespan(most)} ({raw!r} given)")
    return value


def grace_of(definition: dict[str, Any]) -> timedelta:
    return parse_duration(definition.get("grace", "00:05:00"), "grace")


def max_runtime_of(definition: dict[str, Any]) -> timedelta | None:
    value = definition.get("maxRuntime")
    return parse_duration(value, "maxRuntime") if value is not None else None


@dataclass(frozen=True)
class MonitorView:
    """What a monitor's rendering reads besides its definition."""

    state: str
    status: str
    last_check_in: datetime | None
    next_expected: datetime | None


def render_monitor(
    *,
    arm_id: str,
    collection: str,
    name: str,
    definition: dict[str, Any],
    view: MonitorView,
    ping_url: str | None = None,
) -> dict[str, Any]:
    recurrence = definition.get("recurrence")
    has_zone = bool(recurrence and recurrence.get("timeZone"))
    properties: dict[str, Any] = {}
    if "startTime" in definition:
        properties["startTime"] = datetimes.render(definition["startTime"], has_zone=has_zone)
    if recurrence is not None:
        properties["recurrence"] = render_recurrence(recurrence, has_zone)
    properties["grace"] = definition.get("grace", format_timespan(DEFAULT_GRACE))
    if "maxRuntime" in definition:
        properties["maxRuntime"] = definition["maxRuntime"]
    properties["state"] = view.state
    disabled = view.state == "Disabled"
    properties["status"] = MonitorStatus.PAUSED if disabled else view.status
    properties["lastCheckIn"] = _instant(view.last_check_in)
    properties["nextExpected"] = None if disabled else _instant(view.next_expected)
    if ping_url is not None:
        properties["pingUrl"] = ping_url
    return {
        "id": arm_id,
        "type": MONITOR_TYPE,
        "name": f"{collection}/{name}",
        "properties": properties,
    }


def _instant(value: datetime | None) -> str | None:
    return datetimes.format_instant(value) if value is not None else None


def render_check_in(
    monitor_id: str,
    monitor: str,
    *,
    check_in_id: int,
    kind: str,
    exit_code: int | None,
    received_at: datetime,
    body: str,
) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "kind": kind,
        "time": datetimes.format_instant(received_at),
        "body": body,
    }
    if exit_code is not None:
        properties["exitCode"] = exit_code
    return {
        "id": f"{monitor_id}/checkIns/{check_in_id}",
        "type": CHECK_IN_TYPE,
        "name": f"{monitor}/{check_in_id}",
        "properties": properties,
    }
