"""`horarium preview FILE`: print a job's next executions, one per line (and first, on
standard error, the schedule in words: ``schedule: weekdays at 09:00 Europe/Paris``).

Each line: the UTC instant (ISO 8601), then the wall-clock time in the job's zone, then what
daylight saving time and exclusion calendars (`--calendar NAME=FILE`) did, if anything::

    2019-03-10T08:30:00Z  2019-03-10 03:30:00 CDT  [DST: moved, 02:30:00 does not exist]
    2031-01-04T14:00:00Z  2031-01-04 09:00:00 EST  [calendar weekends: skipped]

With `recurrence.jitter`, how much after the instant the schedule named each execution starts::

    2024-01-01T09:04:17Z  2024-01-01 10:04:17 CET  [jitter: +0:04:17 after 10:00:00]

A job with `executionPolicy` first gets a line naming it (overlap cannot be previewed: it depends
on how long executions take)::

    # executionPolicy: overlap Skip, missed RunAll (catchUpWindow 02:00:00)

With `--down-since ISO`, the job's schedule was set then and the service was down from then until
`--now`: the executions that fell due meanwhile come first (the newest `--count` of them), each
marked with what `executionPolicy.missed` does with them when the engine comes back::

    2024-01-01T10:00:00Z  2024-01-01 10:00:00 UTC  [missed: postponed]
    2024-01-01T11:00:00Z  2024-01-01 11:00:00 UTC  [missed: runs]
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import click

from horarium.model.errors import ApiError
from horarium.model.execution_policy import (
    describe_policy,
    missed_runs,
    parse_policy,
    policy_of,
)
from horarium.recurrence import (
    Occurrence,
    Plan,
    RecurrenceError,
    Run,
    describe,
    outline,
    plan,
    preview,
    with_calendars,
)

USAGE_ERROR = 2
MISSED_SCAN = 1_000_000  # --down-since: at most this many missed executions are enumerated


@click.command("preview")
@click.argument("file", type=click.File("r"))
@click.option("--now", default=None, help="Creation instant (ISO 8601); default: now.")
@click.option(
    "--count",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many executions (times a calendar skips are listed besides, not counted).",
)
@click.option(
    "--calendar",
    "calendars",
    multiple=True,
    metavar="NAME=FILE",
    help="An exclusion calendar the job may list (JSON: the resource or its properties).",
)
@click.option(
    "--down-since",
    default=None,
    metavar="ISO",
    help="The job was set then and the service was down until --now: list the executions"
    " missed meanwhile, marked with what executionPolicy.missed does with them.",
)
def preview_command(
    file: Any, now: str | None, count: int, calendars: tuple[str, ...], down_since: str | None
) -> None:
    """Print the next executions of a job (JSON file, or - for stdin)."""
    raise SystemExit(
        run(file.read(), now=now, count=count, calendars=calendars, down_since=down_since)
    )


def run(
    text: str,
    *,
    now: str | None = None,
    count: int = 10,
    out: TextIO | None = None,
    err: TextIO | None = None,
    calendars: Sequence[str] = (),
    down_since: str | None = None,
) -> int:
    """Preview the job JSON in `text` (a properties object or a whole job resource), with the
    exclusion calendars given as ``NAME=FILE``; `down_since`: the service was down from then
    until `now` (see the module's docstring). The exit code: 0, or 2 with a one-line error
    naming the field."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        properties = with_calendars(_properties(text), _calendars(calendars))
        policy = _policy(properties)
        created = _now(now)
        since = None if down_since is None else _now(down_since, "--down-since")
        if since is not None and since >= created:
            raise RecurrenceError("--down-since", "must be before --now")
        if count < 1:
            raise RecurrenceError("--count", f"{count} is less than 1")
        compiled = plan(properties, created=since or created)
        missed = _missed(compiled, created) if since is not None else []
        wanted = len(preview(properties, now=since or created, count=len(missed) + count))
        runs = outline(compiled, compiled.created, wanted) if wanted else []
        described = describe(properties, created=compiled.created)
    except RecurrenceError as error:
        print(f"error: {error}", file=err)
        return USAGE_ERROR
    print(f"schedule: {described}", file=err)
    effective = policy_of({"executionPolicy": policy or {}})
    if policy is not None:
        print(f"# executionPolicy: {describe_policy(effective)}", file=out)
    # A one-time job runs however late it is found.
    ran = missed_runs(missed, created, effective) if compiled.recurring else [True] * len(missed)
    fates = dict(zip(missed, ran, strict=True))
    shown = [r for r in runs if (r.instant or r.scheduled[0]) > created]
    late = [r for r in runs if (r.instant or r.scheduled[0]) <= created]
    if len(late) > count:
        print(f"{len(late) - count} earlier missed executions are not listed", file=err)
        late = late[-count:]
    if not runs:
        print("no executions: the series has already ended", file=err)
    for run in [*late, *_first_executions(shown, count)]:
        line = _run_line(compiled.describe(run.instant or run.scheduled[0]), run)
        if run.instant is not None and run.instant in fates:
            line += f"  [missed: {'runs' if fates[run.instant] else 'postponed'}]"
        print(line, file=out)
    return 0


def _policy(properties: Mapping[str, Any]) -> dict[str, Any] | None:
    """The job's `executionPolicy` as the API would store it, or None without one."""
    raw = properties.get("executionPolicy")
    if raw is None:
        return None
    try:
        return parse_policy(raw)
    except ApiError as error:
        field, _, rule = str(error).partition(": ")
        raise RecurrenceError(field, rule) from None


def _missed(compiled: Plan, now: datetime) -> list[datetime]:
    """The executions due by `now` of a series set at its `created`, oldest first."""
    found: list[datetime] = []
    for instant in compiled.iter_from(compiled.created):
        if instant > now or (compiled.count is not None and len(found) >= compiled.count):
            break
        found.append(instant)
        if len(found) >= MISSED_SCAN:
            break
    return found


def _first_executions(runs: Sequence[Run], count: int) -> list[Run]:
    """`runs` up to their `count`-th execution: times a calendar skips are listed besides, not
    counted (as the API's `upcoming` counts)."""
    taken: list[Run] = []
    executions = 0
    for run in runs:
        if executions == count:
            break
        taken.append(run)
        executions += run.instant is not None
    return taken


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


def _now(value: str | None, option: str = "--now") -> datetime:
    if value is None:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value.strip().upper())
    except ValueError:
        raise RecurrenceError(option, f"{value!r} is not an ISO 8601 date-time") from None
    if parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=UTC)  # no offset: UTC
    return parsed
