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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import click

from horarium.cli.options import OneLineError
from horarium.cli.rest.connection import Connection
from horarium.cli.rest.export_layout import CollectionFile, JobFile
from horarium.cli.rest.import_table import HEADERS, executions
from horarium.cli.rest.importing import (
    Comparison,
    Importer,
    Outcome,
    Tally,
    attempt,
    not_sent,
    report,
)
from horarium.cli.rest.output import print_table
from horarium.client import CollectionRef, check_segment
from horarium.importers.canonical import collection_as_answered, job_as_answered
from horarium.importers.documents import Document

CANONICAL = Comparison(collection=collection_as_answered, job=job_as_answered)


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
        tally = _run(importer, subscription, documents)
    if options.dry_run:
        print_table(HEADERS, tally.rows)
    for line in notes:
        click.echo(line)
    report(tally, where, options.dry_run, files=False)


def _run(importer: Importer, subscription: str, documents: Sequence[Document]) -> Tally:
    """Each document in order; a job of a collection that failed is not sent."""
    tally = Tally()
    failed: set[tuple[str, str]] = set()
    for document in documents:
        ref = CollectionRef(subscription, document.resource_group, document.names[0])
        key = (document.resource_group.lower(), document.names[0].lower())
        counts = tally.collections if document.kind == "collection" else tally.jobs
        shown = "-"
        if importer.dry_run and document.kind == "job":
            shown = executions(document.body, importer.disabled)
        row = (document.label, shown)
        if key in failed:
            not_sent(tally, document.label, row)
            counts[Outcome.FAILED] += 1
            continue
        work = partial(_put, importer, ref, document, tally)
        outcome = attempt(tally, document.label, work, row)
        counts[outcome] += 1
        if outcome is Outcome.FAILED and document.kind == "collection":
            failed.add(key)
    return tally


def _put(importer: Importer, ref: CollectionRef, document: Document, tally: Tally) -> Outcome:
    """Compare one resource with the service's, and PUT it when it differs."""
    if document.kind == "collection":
        file = CollectionFile(ref.resource_group, ref.name, Path(), document.body)
        return importer.collection(ref, file, tally)
    job = JobFile(document.names[1], Path(), document.body)
    return importer.job(ref, job, tally, document.secret_hint)
