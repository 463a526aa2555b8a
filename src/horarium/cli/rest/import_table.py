"""The `--dry-run` table every import prints: each resource, what the import would do with it,
and a job's first three executions if it were created now, on its own clock."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from horarium.importers.canonical import job_as_answered
from horarium.recurrence import RecurrenceError, plan, preview, with_calendars

SHOWN_EXECUTIONS = 3
HEADERS = ["RESOURCE", "ACTION", f"FIRST {SHOWN_EXECUTIONS} EXECUTIONS (the job's time zone)"]
NEEDS_SECRET = "needs secret"
WORDS = {"created": "create", "replaced": "replace", "unchanged": "unchanged", "failed": "failed"}


def executions(
    body: dict[str, Any],
    disabled: bool = False,
    calendars: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """A job's first executions if created now, on its own clock (none while `disabled`, or
    while its own state is Disabled), less what `calendars` (by name) exclude."""
    shown = job_as_answered(body) or body  # the API's spelling, as the engine reads it
    properties: Any = shown.get("properties")
    if not isinstance(properties, dict):
        return "-"
    if disabled or str(properties.get("state", "")).lower() == "disabled":
        return "none (Disabled)"
    now = datetime.now(UTC)
    try:
        zone = plan(with_calendars(properties, calendars), created=now).zone
        found = preview(properties, now=now, count=SHOWN_EXECUTIONS, calendars=calendars)
    except (RecurrenceError, TypeError, ValueError) as e:
        return f"invalid: {e}"
    if not found:
        return "none (the series has ended)"
    return ", ".join(f"{instant.astimezone(zone):%Y-%m-%d %H:%M %Z}" for instant in found)
