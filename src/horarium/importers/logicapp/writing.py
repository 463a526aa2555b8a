"""A job (as the API answers it) written as the Logic Apps workflow definition that schedules the
same executions: a `Recurrence` trigger and an `Http` action (its error action an `Http` action
that runs after the first has failed), with the list of what the workflow cannot express.

Not expressible, so no workflow is written: a one-time job (Logic Apps has no one-time trigger),
a `cron` recurrence, an action other than Http(s). Expressible in part, so written and listed:
`recurrence.count` (Logic Apps has none), exclusion calendars, `jitter`, `executionPolicy`,
`pause`, a Disabled state (a workflow's state is the resource's, not the definition's), an
error action other than Http(s), and the secrets the API never returns (left out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tzlocal.windows_tz import tz_win

from horarium.model.durations import format_iso, read_duration
from horarium.recurrence import parse_instant
from horarium.recurrence.zones import find_zone

SCHEMA = (
    "https://schema.management.azure.com/providers/Microsoft.Logic/schemas/2016-06-01/"
    "workflowdefinition.json#"
)
FREQUENCIES = {"minute": "Minute", "hour": "Hour", "day": "Day", "week": "Week", "month": "Month"}
SECRETS = ("password", "secret", "pfx")
TRIGGER = "Recurrence"
ACTION = "HTTP"
ERROR_ACTION = "Error_action"


@dataclass
class Workflow:
    """The definition (None when the job cannot be expressed) and what it leaves out."""

    definition: dict[str, Any] | None
    not_expressed: list[str] = field(default_factory=list)


def workflow_of(job: dict[str, Any]) -> Workflow:
    """The workflow definition of `job` (its `properties` as the API answers them)."""
    properties = job.get("properties") or {}
    out = Workflow(None)
    recurrence = properties.get("recurrence")
    action = properties.get("action") or {}
    if not isinstance(recurrence, dict):
        out.not_expressed.append("a one-time job: Logic Apps has no one-time trigger")
        return out
    if recurrence.get("cron") is not None:
        out.not_expressed.append(f"recurrence.cron {recurrence['cron']!r}: no Logic Apps schedule")
        return out
    if str(action.get("type", "")).lower() not in ("http", "https"):
        out.not_expressed.append(f"a {action.get('type')} action: only Http is written")
        return out
    trigger = {"type": "Recurrence", "recurrence": _recurrence(properties, out.not_expressed)}
    actions = {ACTION: _http(action, "properties.action", out.not_expressed, {})}
    error = action.get("errorAction")
    notes = out.not_expressed
    if isinstance(error, dict) and str(error.get("type", "")).lower() in ("http", "https"):
        after = {ACTION: ["Failed", "TimedOut"]}
        actions[ERROR_ACTION] = _http(error, "properties.action.errorAction", notes, after)
    elif isinstance(error, dict):
        notes.append(f"the error action ({error.get('type')}): only Http is written")
    for name in ("executionPolicy", "pause"):
        if properties.get(name) is not None:
            out.not_expressed.append(f"properties.{name}")
    if str(properties.get("state", "")).lower() == "disabled":
        out.not_expressed.append("state Disabled: disable the workflow after creating it")
    out.definition = {
        "$schema": SCHEMA,
        "contentVersion": "1.0.0.0",
        "parameters": {},
        "triggers": {TRIGGER: trigger},
        "actions": actions,
        "outputs": {},
    }
    return out


def windows_zone(name: str) -> str | None:
    """The Windows name of a zone (IANA or Windows, any case), or None when it has none."""
    zone = find_zone(name)
    if zone is None:
        return None
    return tz_win.get(zone.key)


def _recurrence(properties: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    recurrence = properties["recurrence"]
    frequency = str(recurrence.get("frequency", "")).lower()
    interval = int(recurrence.get("interval") or 1)
    if frequency == "year":  # Horarium's Year is 12 months
        frequency, interval = "month", interval * 12
    out: dict[str, Any] = {"frequency": FREQUENCIES.get(frequency, frequency), "interval": interval}
    zone = recurrence.get("timeZone")
    windows = windows_zone(str(zone)) if zone is not None else None
    if windows is not None:
        out["timeZone"] = windows
    elif zone is not None:
        notes.append(f"recurrence.timeZone {zone!r}: no Windows name; the workflow runs in UTC")
        zone = None
    times = (("startTime", properties.get("startTime")), ("endTime", recurrence.get("endTime")))
    for name, value in times:
        if value is not None:
            out[name] = _wall_clock(value, zone)
    schedule = recurrence.get("schedule")
    if isinstance(schedule, dict) and schedule:
        out["schedule"] = _schedule(schedule)
    if recurrence.get("count") is not None:
        notes.append(f"recurrence.count {recurrence['count']}: Logic Apps has no count; it runs on")
    for name in ("excludeCalendars", "onExcluded", "jitter"):
        if recurrence.get(name) is not None:
            notes.append(f"recurrence.{name}")
    return out


def _schedule(schedule: dict[str, Any]) -> dict[str, Any]:
    """The schedule with day names as Logic Apps writes them (`Monday`; the API answers
    `monday`)."""
    out = dict(schedule)
    if isinstance(out.get("weekDays"), list):
        out["weekDays"] = [str(day).capitalize() for day in out["weekDays"]]
    if isinstance(out.get("monthlyOccurrences"), list):
        out["monthlyOccurrences"] = [
            {**o, "day": str(o.get("day", "")).capitalize()} if isinstance(o, dict) else o
            for o in out["monthlyOccurrences"]
        ]
    return out


def _wall_clock(value: str, zone: str | None) -> str:
    """A date-time as Logic Apps wants it: wall-clock time without an offset in the workflow's
    time zone, or UTC with `Z` when it has none."""
    instant = parse_instant(value, zone)
    named = find_zone(zone) if zone is not None else None
    if named is None:
        return f"{instant:%Y-%m-%dT%H:%M:%S}Z"
    return f"{instant.astimezone(named):%Y-%m-%dT%H:%M:%S}"


def _http(
    action: dict[str, Any], where: str, notes: list[str], after: dict[str, list[str]]
) -> dict[str, Any]:
    request = dict(action.get("request") or {})
    inputs: dict[str, Any] = {"method": request.get("method", "GET"), "uri": request.get("uri")}
    for name in ("headers", "body"):
        if request.get(name) is not None:
            inputs[name] = request[name]
    auth = request.get("authentication")
    if isinstance(auth, dict):
        inputs["authentication"] = auth
        kind = str(auth.get("type", "")).lower()
        needed = {"basic": ("password",), "activedirectoryoauth": ("secret",)}.get(kind, ("pfx",))
        for name in needed:
            if name not in auth:
                notes.append(
                    f"{where}.request.authentication.{name}: not exported (the API never"
                    " returns it); add it"
                )
    if "***" in str(request.get("uri", "")) or "***" in str(request.get("headers", "")):
        notes.append(f"{where}.request: masked (***) parts; put the secrets back")
    retry = action.get("retryPolicy")
    if isinstance(retry, dict):
        inputs["retryPolicy"] = _retry(retry)
    return {"type": "Http", "inputs": inputs, "runAfter": after}


def _retry(retry: dict[str, Any]) -> dict[str, Any]:
    kind = str(retry.get("retryType", "")).lower()
    if kind == "none":
        return {"type": "none"}
    out: dict[str, Any] = {"type": kind or "fixed"}
    if retry.get("retryCount") is not None:
        out["count"] = retry["retryCount"]
    if retry.get("retryInterval") is not None:
        out["interval"] = _iso(str(retry["retryInterval"]))
    if retry.get("maxRetryInterval") is not None:
        out["maximumInterval"] = _iso(str(retry["maxRetryInterval"]))
    return out


def _iso(timespan: str) -> str:
    """A duration as ISO 8601 (`00:01:30` → `PT1M30S`), as workflows write them."""
    return format_iso(read_duration(timespan))
