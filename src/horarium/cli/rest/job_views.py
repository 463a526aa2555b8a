"""Jobs, their history and their upcoming executions as tables and key-value lists."""

from __future__ import annotations

from typing import Any

from horarium.cli.rest.output import NONE, cut, dig, room_left, table, text, when
from horarium.recurrence import RecurrenceError, describe

JOB_HEADERS = (
    *("NAME", "STATE", "SCHEDULE", "NEXT RUN", "LAST RUN"),
    *("EXECUTIONS", "FAILURES", "FAULTED"),
)
JOB_NUMBERS = (5, 6, 7)
HISTORY_HEADERS = ("TIME", "ACTION", "STATUS", "RETRY", "MESSAGE")
UPCOMING_HEADERS = ("EXECUTION (UTC)", "LOCAL TIME", "ZONE", "REPEAT", "NOTE")
# With executions already due that no process has run yet (a Horarium extension of upcoming).
OVERDUE_HEADERS = (*UPCOMING_HEADERS[:-1], "IF MISSED", UPCOMING_HEADERS[-1])
DEFAULT_RETRY = "default (fixed, every 00:00:30, 4 retries)"


def short_name(body: dict[str, Any]) -> str:
    """The last part of a nested `name` (`jc1/ping` → `ping`)."""
    return str(body.get("name") or NONE).rsplit("/", 1)[-1]


def word(value: Any) -> str:
    """An enum value as people read it (`enabled` → `Enabled`)."""
    return text(value)[:1].upper() + text(value)[1:] if value else NONE


def _count(status: Any, key: str) -> str:
    value = dig(status, key)
    return NONE if value is None else str(value)


def job_row(body: dict[str, Any]) -> list[str]:
    status = dig(body, "properties", "status")
    return [
        short_name(body),
        paused_state(word(dig(body, "properties", "state")), dig(body, "properties", "pause")),
        schedule_text(body),
        when(dig(status, "nextExecutionTime")),
        when(dig(status, "lastExecutionTime")),
        _count(status, "executionCount"),
        _count(status, "failureCount"),
        _count(status, "faultedCount"),
    ]


def describe_action(action: Any) -> str:
    """`Http GET http://… (Basic)`, `StorageQueue account/queue`, `ServiceBusTopic ns/topic`."""
    if not isinstance(action, dict):
        return NONE
    kind = text(action.get("type"))
    request = action.get("request")
    if isinstance(request, dict):
        described = f"{kind} {text(request.get('method'))} {text(request.get('uri'))}"
        auth = dig(request, "authentication", "type")
        return f"{described} ({auth})" if auth else described
    queue = action.get("queueMessage")
    if isinstance(queue, dict):
        return f"{kind} {text(queue.get('storageAccount'))}/{text(queue.get('queueName'))}"
    for key in ("serviceBusQueueMessage", "serviceBusTopicMessage"):
        message = action.get(key)
        if isinstance(message, dict):
            target = message.get("queueName") or message.get("topicPath")
            return f"{kind} {text(message.get('namespace'))}/{text(target)}"
    return kind


def describe_retry(action: Any) -> str:
    policy = dig(action, "retryPolicy")
    if not isinstance(policy, dict):
        return DEFAULT_RETRY
    kind = text(policy.get("retryType")).lower()
    if kind == "none":
        return "none (one attempt)"
    interval, count = text(policy.get("retryInterval")), text(policy.get("retryCount"))
    if kind == "exponential":
        longest = text(policy.get("maxRetryInterval"))
        return f"exponential, from {interval} doubling up to {longest}, {count} retries"
    return f"fixed, every {interval}, {count} retries"


def schedule_text(body: dict[str, Any]) -> str:
    """The job's schedule in words: the API's `scheduleDescription` (asked for with
    `$expand`), else the same describer run here (a server that does not write it)."""
    properties = dig(body, "properties")
    told = dig(properties, "scheduleDescription")
    if isinstance(told, str):
        return told
    if not isinstance(properties, dict):
        return NONE
    try:
        return describe(properties)
    except (RecurrenceError, TypeError, ValueError):
        return text(properties.get("recurrence"))


def pause_pairs(pause: Any) -> list[tuple[str, str]]:
    """A paused job's or collection's pause (Horarium extension): nothing when it has none."""
    if not isinstance(pause, dict):
        return []
    return [("paused until", when(pause.get("until"))), ("pause reason", text(pause.get("reason")))]


def describe_policy(policy: Any) -> str:
    """`overlap Skip, missed RunAll (catch-up window 1.00:00:00)` (Horarium extension)."""
    if not isinstance(policy, dict):
        return NONE
    shown = f"overlap {text(policy.get('overlap'))}, missed {text(policy.get('missed'))}"
    if policy.get("missed") == "RunAll":
        shown += f" (catch-up window {text(policy.get('catchUpWindow'))})"
    return shown


def policy_pairs(policy: Any) -> list[tuple[str, str]]:
    """A job's executionPolicy: nothing when it has none."""
    return [("execution policy", describe_policy(policy))] if isinstance(policy, dict) else []


def paused_state(state: str, pause: Any) -> str:
    """A list's STATE cell: `Disabled, paused until 2031-02-03T04:05:06Z` when paused."""
    return f"{state}, paused until {when(pause.get('until'))}" if isinstance(pause, dict) else state


def job_pairs(body: dict[str, Any]) -> list[tuple[str, str]]:
    properties = dig(body, "properties") or {}
    action = properties.get("action")
    status = properties.get("status")
    error_action = dig(action, "errorAction")
    return [
        ("name", text(body.get("name"))),
        ("state", word(properties.get("state"))),
        *pause_pairs(properties.get("pause")),
        ("action", describe_action(action)),
        ("retry", describe_retry(action)),
        ("error action", describe_action(error_action) if error_action else NONE),
        ("start", when(properties.get("startTime"))),
        ("schedule", schedule_text(body)),
        *policy_pairs(properties.get("executionPolicy")),
        ("next run", when(dig(status, "nextExecutionTime"))),
        ("last run", when(dig(status, "lastExecutionTime"))),
        (
            "executions",
            f"{_count(status, 'executionCount')} (failures {_count(status, 'failureCount')},"
            f" faulted {_count(status, 'faultedCount')})",
        ),
        ("id", text(body.get("id"))),
    ]


def _history_cells(entry: dict[str, Any]) -> list[str]:
    properties = dig(entry, "properties") or {}
    moment = properties.get("startTime") or properties.get("expectedExecutionTime")
    return [
        when(moment),
        text(properties.get("actionName")),
        # The live service wrote no status on Completed entries.
        text(properties.get("status") or "Completed"),
        text(properties.get("retryCount")),
        text(properties.get("message") or ""),
    ]


def history_lines(entries: list[dict[str, Any]]) -> list[str]:
    """The history table, each message cut to the rest of a terminal line."""
    cells = [_history_cells(entry) for entry in entries]
    fixed = table(HISTORY_HEADERS[:-1], [row[:-1] for row in cells], right=(3,))
    width = room_left(len(fixed[0]) + 2)
    messages = ["MESSAGE", *(cut(row[-1], width) for row in cells)]
    return [f"{left}  {message}".rstrip() for left, message in zip(fixed, messages, strict=True)]


def overdue_row(entry: dict[str, Any]) -> list[str]:
    """`upcoming_row` with what executionPolicy.missed does with an overdue execution."""
    row = upcoming_row(entry)
    fate = text(entry.get("ifMissed")) if entry.get("overdue") else ""
    return [*row[:-1], fate, row[-1]]


def upcoming_row(entry: dict[str, Any]) -> list[str]:
    return [
        when(entry.get("executionTime")),
        when(entry.get("localTime")),
        text(entry.get("timeZone")),
        text(entry.get("repeatCount")),
        "; ".join(execution_notes(entry)),
    ]


def execution_notes(entry: dict[str, Any]) -> list[str]:
    """What calendars and daylight saving did to an entry of an upcoming listing."""
    notes = []
    if entry.get("skippedByCalendar"):
        notes.append(f"skipped: calendar {entry['skippedByCalendar']} excludes it")
    if entry.get("movedByCalendar"):
        scheduled = ", ".join(when(t) for t in entry.get("scheduledExecutionTimes") or ())
        notes.append(f"moved by calendar {entry['movedByCalendar']}: runs for {scheduled}")
    if entry.get("movedBySpringForward"):
        notes.append(f"moved: {text(entry.get('scheduledLocalTime'))[11:]} does not exist")
    if entry.get("mergedByFallBack"):
        notes.append("merged: the hour repeats")
    return notes
