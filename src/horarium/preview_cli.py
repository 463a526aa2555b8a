"""`horarium preview FILE`: print a job's next executions, one per line.

Each line: the UTC instant (ISO 8601), then the wall-clock time in the job's zone, then what
daylight saving time did, if anything::

    2019-03-10T08:30:00Z  2019-03-10 03:30:00 CDT  [DST: moved, 02:30:00 does not exist]

With `recurrence.jitter`, how much after the instant the schedule named each execution starts::

    2024-01-01T09:04:17Z  2024-01-01 10:04:17 CET  [jitter: +0:04:17 after 10:00:00]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

from horarium.recurrence import Occurrence, RecurrenceError, plan, preview

USAGE_ERROR = 2


def run(
    text: str,
    *,
    now: str | None = None,
    count: int = 10,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Preview the job JSON in `text` (a properties object or a whole job resource); the exit
    code: 0, or 2 with a one-line error naming the field."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        properties = _properties(text)
        created = _now(now)
        if count < 1:
            raise RecurrenceError("--count", f"{count} is less than 1")
        compiled = plan(properties, created=created)
        instants = preview(properties, now=created, count=count)
    except RecurrenceError as error:
        print(f"error: {error}", file=err)
        return USAGE_ERROR
    if not instants:
        print("no executions: the series has already ended", file=err)
    for instant in instants:
        print(line(compiled.describe(instant)), file=out)
    return 0


def line(occurrence: Occurrence) -> str:
    """One execution as printed: UTC, local wall-clock time, DST marks."""
    utc = occurrence.instant.isoformat().replace("+00:00", "Z")
    local = occurrence.local
    shown = f"{utc}  {local.strftime('%Y-%m-%d %H:%M:%S')}{_fraction(local)} {local.tzname()}"
    marks = []
    if occurrence.moved:
        marks.append(f"moved, {occurrence.wall.strftime('%H:%M:%S')} does not exist")
    if occurrence.merged:
        marks.append("merged, runs once")
    if marks:
        shown += f"  [DST: {'; '.join(marks)}]"
    if occurrence.jitter and occurrence.nominal is not None:
        nominal = occurrence.nominal.astimezone(local.tzinfo).strftime("%H:%M:%S")
        shown += f"  [jitter: +{occurrence.jitter} after {nominal}]"
    return shown


def _fraction(value: datetime) -> str:
    return f".{value.microsecond:06d}" if value.microsecond else ""


def _properties(text: str) -> Mapping[str, Any]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise RecurrenceError(
            "input", f"not JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        ) from None
    if not isinstance(document, dict):
        raise RecurrenceError("input", "must be a JSON object (job properties or a job)")
    for key, value in document.items():
        if key.lower() == "properties" and isinstance(value, dict):
            return value  # a whole job resource
    return document


def _now(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value.strip().upper())
    except ValueError:
        raise RecurrenceError("--now", f"{value!r} is not an ISO 8601 date-time") from None
    if parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)  # no offset: UTC
    return parsed
