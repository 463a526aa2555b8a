"""`horarium preview FILE`: print a job's next executions, one per line.

Each line: the UTC instant (ISO 8601), then the wall-clock time in the job's zone, then what
daylight saving time and exclusion calendars (`--calendar NAME=FILE`) did, if anything::

    2019-03-10T08:30:00Z  2019-03-10 03:30:00 CDT  [DST: moved, 02:30:00 does not exist]
    2031-01-04T14:00:00Z  2031-01-04 09:00:00 EST  [calendar weekends: skipped]

With `recurrence.jitter`, how much after the instant the schedule named each execution starts::

    2024-01-01T09:04:17Z  2024-01-01 10:04:17 CET  [jitter: +0:04:17 after 10:00:00]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from horarium.recurrence import (
    Occurrence,
    RecurrenceError,
    Run,
    outline,
    plan,
    preview,
    with_calendars,
)

USAGE_ERROR = 2


def run(
    text: str,
    *,
    now: str | None = None,
    count: int = 10,
    out: TextIO | None = None,
    err: TextIO | None = None,
    calendars: Sequence[str] = (),
) -> int:
    """Preview the job JSON in `text` (a properties object or a whole job resource), with the
    exclusion calendars given as ``NAME=FILE``; the exit code: 0, or 2 with a one-line error
    naming the field."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        properties = with_calendars(_properties(text), _calendars(calendars))
        created = _now(now)
        if count < 1:
            raise RecurrenceError("--count", f"{count} is less than 1")
        compiled = plan(properties, created=created)
        wanted = len(preview(properties, now=created, count=count))
        runs = outline(compiled, compiled.created, wanted) if wanted else []
    except RecurrenceError as error:
        print(f"error: {error}", file=err)
        return USAGE_ERROR
    if not runs:
        print("no executions: the series has already ended", file=err)
    for run in runs:
        print(_run_line(compiled.describe(run.instant or run.scheduled[0]), run), file=out)
    return 0


def _run_line(occurrence: Occurrence, run: Run) -> str:
    """`line`, with what a calendar did: skipped, or moved from the scheduled times."""
    shown = line(occurrence)
    if run.calendar is None:
        return shown
    if run.instant is None:
        return f"{shown}  [calendar {run.calendar}: skipped]"
    zone = occurrence.local.tzinfo
    moved = ", ".join(t.astimezone(zone).strftime("%Y-%m-%d %H:%M") for t in run.scheduled)
    return f"{shown}  [calendar {run.calendar}: runs for {moved}]"


def _calendars(specs: Sequence[str]) -> dict[str, Any] | None:
    """``NAME=FILE`` options as calendar properties by name (FILE: the resource or its
    properties as JSON)."""
    if not specs:
        return None
    found: dict[str, Any] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name.strip() or not path:
            raise RecurrenceError("--calendar", f"{spec!r} is not NAME=FILE")
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as error:
            raise RecurrenceError("--calendar", f"{path}: {error.strerror}") from None
        found[name.strip()] = _properties(text)
    return found


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
