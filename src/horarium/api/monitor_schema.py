"""The OpenAPI schemas of check-in monitors (a Horarium extension): the monitor resource and
its check-ins. Its `recurrence` is a job's (`JobRecurrence`), `count` aside."""

from __future__ import annotations

from typing import Any

from horarium.api.calendar_schema import list_result, member_resource
from horarium.api.ping_limits import BURST, PER_SECOND
from horarium.api.ping_ops import MAX_BODY
from horarium.model.durations import format_timespan
from horarium.model.monitor import MAX_GRACE, MAX_RUNTIME, CheckInKind, MonitorStatus


def _timespan(what: str, most: str) -> dict[str, Any]:
    return {
        "type": "string",
        "description": f"{what} TimeSpan or ISO 8601 duration, at most {most}.",
        "examples": ["00:05:00", "PT5M"],
    }


_PROPERTIES = {
    "type": "object",
    "description": "When check-ins are expected (docs/monitors.md). startTime and recurrence"
    " are read as a job's (recurrence.count aside); at least one is required.",
    "properties": {
        "startTime": {"type": "string", "format": "date-time"},
        "recurrence": {"$ref": "#/components/schemas/JobRecurrence"},
        "grace": _timespan(
            "How late a check-in may come before the monitor is Down (default 00:05:00).",
            format_timespan(MAX_GRACE),
        ),
        "maxRuntime": _timespan(
            "How long after a start check-in its success may come (optional).",
            format_timespan(MAX_RUNTIME),
        ),
        "state": {"type": "string", "enum": ["Enabled", "Disabled"]},
        "status": {
            "type": "string",
            "readOnly": True,
            "enum": [s.value for s in MonitorStatus],
            "description": "New: no check-in yet; Up; Late: an expected check-in is overdue,"
            " within grace; Down: past grace, a failed check-in, or a run past maxRuntime;"
            " Paused: the monitor is Disabled.",
        },
        "lastCheckIn": {"type": ["string", "null"], "format": "date-time", "readOnly": True},
        "nextExpected": {
            "type": ["string", "null"],
            "format": "date-time",
            "readOnly": True,
            "description": "The expected check-in not received yet (in the past while Late or"
            " Down), exclusion calendars honoured.",
        },
        "pingUrl": {
            "type": "string",
            "readOnly": True,
            "description": "Only in the answer of the PUT that creates the monitor and of"
            " regeneratePingUrl (only the token's SHA-256 is stored). GET or POST it,"
            " or …/start, …/fail, …/{exitCode}; no Authorization header.",
        },
    },
}

_RESOURCE = member_resource("monitors", "MonitorProperties")

_CHECK_IN = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string"},
        "name": {"type": "string"},
        "properties": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": [k.value for k in CheckInKind]},
                "exitCode": {"type": "integer", "minimum": 0, "maximum": 255},
                "time": {"type": "string", "format": "date-time"},
                "body": {
                    "type": "string",
                    "description": f"The first {MAX_BODY} bytes of the check-in's body, as"
                    " text. Check-ins are rate-limited per token: "
                    f"{BURST} at once, {PER_SECOND:g} a second on average (429 past it).",
                },
            },
        },
    },
}


def add_monitor_schemas(schemas: dict[str, Any]) -> None:
    """Add the monitor schemas to the document's component schemas."""
    schemas["MonitorProperties"] = _PROPERTIES
    schemas["MonitorDefinition"] = _RESOURCE
    schemas["MonitorListResult"] = list_result("MonitorDefinition")
    schemas["CheckIn"] = _CHECK_IN
    schemas["CheckInListResult"] = list_result("CheckIn")
