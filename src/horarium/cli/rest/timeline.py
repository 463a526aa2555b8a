"""`horarium collections upcoming`: what runs when across a collection, from the API's
collection timeline (`GET …/jobCollections/{jc}/upcoming?from&to`, one request)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import click

from horarium.cli.rest.job_views import execution_notes
from horarium.cli.rest.output import dig, note, print_table, text, when

TIMELINE_HEADERS = ("TIME", "JOB", "NOTE")


def read_zone(_ctx: click.Context, _param: click.Parameter, value: str | None) -> ZoneInfo:
    """`--zone`: an IANA zone name (default UTC)."""
    if value is None:
        return ZoneInfo("UTC")
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise click.BadParameter(f"{value!r} is not an IANA time zone (Europe/Paris)") from None


def instant_param(value: str | None, zone: ZoneInfo) -> str | None:
    """`--from` / `--to` for the API: a time without an offset is read in `--zone`; what does
    not parse is sent as written (the API's 400 names the field)."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed.astimezone(UTC).isoformat().replace("+00:00", "Z")


def timeline_rows(answer: dict[str, Any], zone: ZoneInfo) -> list[list[str]]:
    """One row per execution of every job, by time: the time in `zone`, the job, the marks."""
    rows: list[tuple[datetime, str, list[str]]] = []
    for job in answer.get("value") or []:
        for entry in job.get("executions") or []:
            at = datetime.fromisoformat(str(entry["executionTime"]).replace("Z", "+00:00"))
            local = at.astimezone(zone)
            rows.append(
                (at, str(job.get("name")), [_time(local), str(job.get("name")), _note(entry, job)])
            )
    rows.sort(key=lambda row: (row[0], row[1]))
    return [row for _, _, row in rows]


def _time(local: datetime) -> str:
    return f"{local:%Y-%m-%d %H:%M:%S} {local.tzname()}"


def _note(entry: dict[str, Any], job: dict[str, Any]) -> str:
    notes = execution_notes(entry)
    if entry.get("jittered"):
        notes.append(f"jitter +{entry.get('jitterOffset')}")
    if entry.get("paused"):
        held = dig(job, "heldBy") or {}
        notes.append(f"paused: {text(held.get('by'))} {text(held.get('state'))}")
    return "; ".join(notes)


def print_timeline(answer: dict[str, Any], zone: ZoneInfo, collection: str) -> None:
    """The table, and on stderr the window, each job's schedule and any job not listed."""
    start, end = answer.get("from"), answer.get("to")
    note(f"From {when(start)} to {when(end)}, times in {zone.key}.")
    for job in answer.get("value") or []:
        if job.get("error"):
            note(f"{job.get('name')}: not listed: {job['error']}")
    rows = timeline_rows(answer, zone)
    if not rows:
        note(f"No executions in the collection {collection} in this window.")
        return
    print_table(TIMELINE_HEADERS, rows)
