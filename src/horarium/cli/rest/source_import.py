"""What `horarium import --from SOURCE` does once a reader (`horarium.importers`) has turned the
source into `Document`s: compare each with the API's answer (in the API's own spelling,
`horarium.importers.canonical`) and PUT what differs, in the order given, through the same
`Importer` as `import DIR`.

So every source behaves alike: a second import changes nothing; a job to create whose secret its
source does not show is not created and is named with what would give it (`needs secret` in the
table); the API's refusals (a plan's 409 included) are one line each; a job of a collection that
failed is not sent; `--dry-run` prints a table with the first three executions of each job on
its own clock and sends nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import click

from horarium.cli.options import OneLineError
from horarium.cli.rest.connection import Connection
from horarium.cli.rest.export_layout import CollectionFile, JobFile
from horarium.cli.rest.importing import (
    Comparison,
    Importer,
    Outcome,
    SecretNeeded,
    Tally,
    report,
)
from horarium.cli.rest.output import print_table
from horarium.client import ApiRefused, CollectionRef, check_segment
from horarium.importers.canonical import collection_as_answered, job_as_answered
from horarium.importers.documents import Document
from horarium.recurrence import RecurrenceError, plan, preview

SHOWN_EXECUTIONS = 3
CANONICAL = Comparison(collection=collection_as_answered, job=job_as_answered)
ACTIONS = {
    Outcome.CREATED: ("create", "created"),
    Outcome.REPLACED: ("replace", "replaced"),
    Outcome.UNCHANGED: ("unchanged", "unchanged"),
    Outcome.FAILED: ("failed", "failed"),
}
NEEDS_SECRET = "needs secret"
TABLE_HEADERS = ["RESOURCE", "ACTION", f"FIRST {SHOWN_EXECUTIONS} EXECUTIONS (the job's time zone)"]


@dataclass(frozen=True)
class RunOptions:
    """How to import: `dry_run` compares only; `resend_secrets` PUTs unchanged resources that
    carry secrets; `disabled` imports every job Disabled."""

    dry_run: bool
    resend_secrets: bool = False
    disabled: bool = False


def parse_sets(given: Sequence[str]) -> dict[str, str]:
    """`--set NAME=VALUE` options as a mapping (the last of a name wins)."""
    values: dict[str, str] = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise OneLineError(f"--set {item!r}: write NAME=VALUE")
        values[name.strip()] = value
    return values


def checked_names(source: Path | str, documents: Sequence[Document]) -> None:
    """A name the API would refuse stops the import before anything is sent."""
    for document in documents:
        kinds = ("resource group", "collection", "job")
        for name, what in zip((document.resource_group, *document.names), kinds, strict=False):
            try:
                check_segment(name, what)
            except ValueError as e:
                raise OneLineError(f"{source}: {document.label}: {e}") from None


def import_documents(
    connection: Connection,
    subscription: str,
    documents: Sequence[Document],
    where: str,
    options: RunOptions,
    notes: Sequence[str] = (),
) -> None:
    """Compare and PUT `documents` in order; print the dry-run table, `notes`, the failures and
    the summary naming `where` (exit code 1 when anything failed)."""
    with connection.client() as client:
        importer = Importer(
            client, options.dry_run, options.resend_secrets, CANONICAL, options.disabled
        )
        tally, rows = _run(importer, subscription, documents)
    if options.dry_run:
        print_table(TABLE_HEADERS, rows)
    for line in notes:
        click.echo(line)
    report(tally, where, options.dry_run, files=False)


def _run(
    importer: Importer, subscription: str, documents: Sequence[Document]
) -> tuple[Tally, list[list[str]]]:
    """Each document in order; a job of a collection that failed is not sent."""
    tally, rows = Tally(), []
    failed: set[tuple[str, str]] = set()
    for document in documents:
        ref = CollectionRef(subscription, document.resource_group, document.names[0])
        key = (document.resource_group.lower(), document.names[0].lower())
        counts = tally.collections if document.kind == "collection" else tally.jobs
        shown = "-"
        if importer.dry_run and document.kind == "job":
            shown = executions(document.body, importer.disabled)
        if key in failed:
            tally.failures.append(f"{document.label}: not sent (its collection failed)")
            counts[Outcome.FAILED] += 1
            rows.append([document.label, "not sent", shown])
            continue
        work = partial(_put, importer, ref, document, tally)
        outcome, action = _attempt(tally, document.label, work, importer.dry_run)
        counts[outcome] += 1
        if outcome is Outcome.FAILED and document.kind == "collection":
            failed.add(key)
        rows.append([document.label, action, shown])
    return tally, rows


def _put(importer: Importer, ref: CollectionRef, document: Document, tally: Tally) -> Outcome:
    """Compare one resource with the service's, and PUT it when it differs."""
    if document.kind == "collection":
        file = CollectionFile(ref.resource_group, ref.name, Path(), document.body)
        return importer.collection(ref, file, tally)
    job = JobFile(document.names[1], Path(), document.body)
    return importer.job(ref, job, tally, document.secret_hint)


def _attempt(
    tally: Tally, label: str, work: Callable[[], Outcome], dry_run: bool
) -> tuple[Outcome, str]:
    """The outcome and its word for the table; a refusal (but a 401, which ends the import)
    or a missing secret is a failure line."""
    try:
        outcome = work()
    except SecretNeeded as e:
        tally.failures.append(f"{label}: {e}")
        return Outcome.FAILED, NEEDS_SECRET
    except ApiRefused as e:
        if e.status == 401:
            raise
        tally.failures.append(f"{label}: {e}")
        return Outcome.FAILED, "failed"
    return outcome, ACTIONS[outcome][0 if dry_run else 1]


def executions(body: dict[str, Any], disabled: bool = False) -> str:
    """A job's first executions if created now, on its own clock (none while `disabled`, or
    while its own state is Disabled)."""
    shown = job_as_answered(body) or body  # the API's spelling, as the engine reads it
    properties: Any = shown.get("properties")
    if not isinstance(properties, dict):
        return "-"
    if disabled or str(properties.get("state", "")).lower() == "disabled":
        return "none (Disabled)"
    now = datetime.now(UTC)
    try:
        zone = plan(properties, created=now).zone
        found = preview(properties, now=now, count=SHOWN_EXECUTIONS)
    except (RecurrenceError, TypeError, ValueError) as e:
        return f"invalid: {e}"
    if not found:
        return "none (the series has ended)"
    return ", ".join(f"{instant.astimezone(zone):%Y-%m-%d %H:%M %Z}" for instant in found)
