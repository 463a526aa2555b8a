"""Jobs on the wire: request bodies into canonical definitions, stored jobs into responses.

`jobs.definition` holds `startTime`, `action` and `recurrence` in canonical form (see
`horarium.model.actions`); the job's state and status live in their own columns.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from horarium.model import datetimes, durations, enums
from horarium.model.actions import ACTION_SHAPE, WireStyle, parse_action, render_action
from horarium.model.enums import JobState
from horarium.model.errors import BadRequest
from horarium.model.execution_policy import POLICY_SHAPE, parse_policy, render_policy
from horarium.model.keys import ListOf, Shape, canonical_keys
from horarium.model.names import JOB_TYPE
from horarium.model.pause import PAUSE, parse_pause, shown, without_since
from horarium.model.pause import SHAPE as PAUSE_SHAPE
from horarium.recurrence import MODES as ON_EXCLUDED
from horarium.recurrence import RecurrenceError, describe

# Horarium's read-only extension of a job's answer: its timing in plain English
# (`horarium.recurrence.describe`), ignored when sent back.
DESCRIPTION = "scheduleDescription"

MAX_JOB_BYTES = 16 * 1024
RECURRENCE_FREQUENCIES = ("Second", *enums.FREQUENCIES, "Year")  # Second, Year: Horarium's

SCHEDULE_SHAPE: dict[str, Shape] = {
    "minutes": None,
    "hours": None,
    "weekDays": None,
    "monthDays": None,
    "monthlyOccurrences": ListOf({"day": None, "Occurrence": None}),
}
RECURRENCE_SHAPE: dict[str, Shape] = {
    "frequency": None,
    "interval": None,
    "count": None,
    "endTime": None,
    "schedule": SCHEDULE_SHAPE,
    "timeZone": None,
    "cron": None,  # Horarium extensions (docs/recurrence.md §9, §10)
    "jitter": None,
    "excludeCalendars": None,
    "onExcluded": None,
}
PROPERTIES_SHAPE: dict[str, Shape] = {
    "startTime": None,
    "action": ACTION_SHAPE,
    "recurrence": RECURRENCE_SHAPE,
    "executionPolicy": POLICY_SHAPE,  # Horarium: overlap and missed executions
    "state": None,
    "status": None,
    "pause": PAUSE_SHAPE,
}
BODY_SHAPE: dict[str, Shape] = {
    "id": None,
    "type": None,
    "name": None,
    "properties": PROPERTIES_SHAPE,
}


@dataclass(frozen=True)
class JobInput:
    definition: dict[str, Any]  # canonical startTime / action / recurrence
    state: str | None  # as requested (canonical spelling), None when not given


@dataclass(frozen=True)
class JobStatus:
    execution_count: int
    failure_count: int
    faulted_count: int
    last_execution_at: datetime | None
    next_execution_at: datetime | None


def properties_of(body: Any) -> dict[str, Any]:
    """The `properties` object of a job request body, property names spelled canonically."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object with a 'properties' object.")
    shaped = canonical_keys(body, BODY_SHAPE)
    properties = shaped.get("properties")
    if properties is None:
        raise BadRequest("properties: required")
    if not isinstance(properties, dict):
        raise BadRequest("properties: must be a JSON object")
    return properties


def stored_properties(definition: dict[str, Any], state: str) -> dict[str, Any]:
    """A stored job as properties again, the base a PATCH is merged onto."""
    out = {**definition, "state": state}
    if PAUSE in definition:
        out[PAUSE] = without_since(definition[PAUSE])
    return out


def parse_job(properties: dict[str, Any]) -> JobInput:
    """Validate key-canonical job properties (not the timing: see `model.schedule.compile`)."""
    if properties.get("action") is None:
        raise BadRequest("properties.action: required")
    definition: dict[str, Any] = {}
    if properties.get("startTime") is not None:
        definition["startTime"] = instant_text(properties["startTime"])
    definition["action"] = parse_action(properties["action"], "properties.action")
    if properties.get("recurrence") is not None:
        definition["recurrence"] = canonical_recurrence(properties["recurrence"])
    if properties.get(PAUSE) is not None:
        definition[PAUSE] = parse_pause(properties[PAUSE], "properties.pause")
    if properties.get("executionPolicy") is not None:
        definition["executionPolicy"] = parse_policy(properties["executionPolicy"])
    state = None
    if properties.get("state") is not None:
        state = enums.parse(properties["state"], enums.JOB_STATES, "properties.state")
    size = len(json.dumps(definition, separators=(",", ":"), ensure_ascii=False).encode())
    if size > MAX_JOB_BYTES:
        raise BadRequest(
            f"properties: the job is {size} bytes; a job may be at most {MAX_JOB_BYTES} (16 KB)",
            code="JobTooLarge",
        )
    return JobInput(definition=definition, state=state)


def instant_text(value: Any) -> Any:
    """Canonical date-time text; values only the recurrence engine reads are kept as given
    (it validates them, with its own message)."""
    try:
        return datetimes.canonical(value, "value")
    except BadRequest:
        return value


def canonical_recurrence(raw: Any) -> Any:
    """Canonical casing of the recurrence's enum values and integral numbers as integers;
    validation is the engine's (`plan`)."""
    if not isinstance(raw, dict):
        return raw
    out = {k: _integral(v) for k, v in raw.items() if v is not None}
    found = enums.find(out.get("frequency"), RECURRENCE_FREQUENCIES)
    if found:
        out["frequency"] = found
    out["onExcluded"] = enums.find(out.get("onExcluded"), ON_EXCLUDED) or out.get("onExcluded")
    if out["onExcluded"] is None:
        del out["onExcluded"]
    if out.get("endTime") is not None:
        out["endTime"] = instant_text(out["endTime"])
    if isinstance(out.get("jitter"), str):
        out["jitter"] = _timespan_text(out["jitter"])
    schedule = out.get("schedule")
    if isinstance(schedule, dict):
        schedule = {k: v for k, v in schedule.items() if v is not None}
        for key in ("minutes", "hours", "monthDays"):
            if isinstance(schedule.get(key), list):
                schedule[key] = [_integral(v) for v in schedule[key]]
        days = schedule.get("weekDays")
        if isinstance(days, list):
            schedule["weekDays"] = [enums.find(d, enums.WEEK_DAYS) or d for d in days]
        occurrences = schedule.get("monthlyOccurrences")
        if isinstance(occurrences, list):
            schedule["monthlyOccurrences"] = [_occurrence(o) for o in occurrences]
        out["schedule"] = schedule
    return out


def _timespan_text(value: str) -> str:
    """A duration as TimeSpan text; a value only the recurrence engine reads is kept as given."""
    try:
        return durations.format_timespan(durations.read_duration(value))
    except ValueError:
        return value


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _occurrence(raw: Any) -> Any:
    if not isinstance(raw, dict):
        return raw
    out = {k: _integral(v) for k, v in raw.items() if v is not None}
    if "day" in out:
        out["day"] = enums.find(out["day"], enums.WEEK_DAYS) or out["day"]
    return out


# ---------------------------------------------------------------------------------------------
# Output


def render_job(
    *,
    arm_id: str,
    collection: str,
    name: str,
    definition: dict[str, Any],
    state: str,
    status: JobStatus,
    style: WireStyle,
    schedule_set_at: datetime | None = None,
) -> dict[str, Any]:
    """The job as the live service returned it (property order included); with
    `schedule_set_at` (a stored job), also its `scheduleDescription`."""
    recurrence = definition.get("recurrence")
    has_zone = bool(recurrence and recurrence.get("timeZone"))
    properties: dict[str, Any] = {}
    if "startTime" in definition:
        properties["startTime"] = datetimes.render(definition["startTime"], has_zone=has_zone)
    properties["action"] = render_action(definition["action"], style)
    if recurrence is not None:
        properties["recurrence"] = render_recurrence(recurrence, has_zone)
    if "executionPolicy" in definition:  # Horarium
        properties["executionPolicy"] = render_policy(definition["executionPolicy"])
    properties["state"] = enums.camel(state)
    if PAUSE in definition:  # Horarium extension
        properties[PAUSE] = shown(definition[PAUSE])
    if schedule_set_at is not None:
        described = describe_schedule(definition, schedule_set_at)
        if described is not None:
            properties[DESCRIPTION] = described
    if state != JobState.DISABLED:
        properties["status"] = _render_status(status)
    return {
        "id": arm_id,
        "type": JOB_TYPE,
        "name": f"{collection}/{name}",
        "properties": properties,
    }


def describe_schedule(definition: dict[str, Any], created: datetime) -> str | None:
    """A stored definition's timing in plain English; None if it cannot be read (a
    definition stored by an older version that no longer validates)."""
    try:
        return describe(definition, created=created)
    except (RecurrenceError, ValueError):
        return None


def render_recurrence(recurrence: dict[str, Any], has_zone: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "frequency" in recurrence:
        out["frequency"] = enums.camel(recurrence["frequency"])
    if "count" in recurrence:
        out["count"] = recurrence["count"]
    if "endTime" in recurrence:
        out["endTime"] = datetimes.render(recurrence["endTime"], has_zone=has_zone)
    if "interval" in recurrence:
        out["interval"] = recurrence["interval"]
    schedule = recurrence.get("schedule")
    if schedule is not None:
        rendered: dict[str, Any] = {}
        for key in ("minutes", "hours", "weekDays", "monthDays", "monthlyOccurrences"):
            if key not in schedule:
                continue
            if key == "weekDays":
                rendered[key] = [_camel(d) for d in schedule[key]]
            elif key == "monthlyOccurrences":
                rendered[key] = [_render_occurrence(o) for o in schedule[key]]
            else:
                rendered[key] = schedule[key]
        out["schedule"] = rendered
    if "timeZone" in recurrence:
        out["timeZone"] = recurrence["timeZone"]
    for key in ("excludeCalendars", "onExcluded"):  # exclusion calendars (Horarium)
        if key in recurrence:
            out[key] = recurrence[key]
    for extension in ("cron", "jitter"):
        if extension in recurrence:
            out[extension] = recurrence[extension]
    return out


def _render_occurrence(occurrence: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"day": _camel(occurrence.get("day"))}
    if occurrence.get("Occurrence") is not None:
        # The live service wrote `occurrence`; the spec (and so the Python SDK) reads
        # `Occurrence`. Both are written so that every client reads the value back.
        out["occurrence"] = occurrence["Occurrence"]
        out["Occurrence"] = occurrence["Occurrence"]
    return out


def _camel(value: Any) -> Any:
    return enums.camel(value) if isinstance(value, str) else value


def _render_status(status: JobStatus) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if status.last_execution_at is not None:
        out["lastExecutionTime"] = datetimes.format_instant(status.last_execution_at)
    if status.next_execution_at is not None:
        out["nextExecutionTime"] = datetimes.format_instant(status.next_execution_at)
    out["executionCount"] = status.execution_count
    out["failureCount"] = status.failure_count
    out["faultedCount"] = status.faulted_count
    return out
