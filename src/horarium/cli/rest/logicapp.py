"""Logic Apps both ways. `horarium import --from logicapp WORKFLOW.json` PUTs the job a workflow
schedules (a `Recurrence` trigger, an `Http` first action) into `--collection` (which must
exist), named `--job` or after the file (without `.workflow.json` or `.json`), listing every
part it cannot carry (`--strict`: refuse instead, sending nothing); an ARM template's
`Microsoft.Logic/workflows` resources are evaluated first (`--set` its parameters), one job
each, named after the workflow. `horarium export --to logicapp FOLDER` writes one workflow per
job, listing what each cannot express (`horarium.importers.logicapp`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from horarium.cli.options import OneLineError
from horarium.cli.rest.connection import Connection
from horarium.cli.rest.export_layout import dumps, file_name
from horarium.cli.rest.job_views import short_name
from horarium.cli.rest.naming import optional_group, subscription_of
from horarium.cli.rest.output import plural
from horarium.cli.rest.source_import import (
    RunOptions,
    checked_names,
    import_documents,
    parse_sets,
)
from horarium.client import CollectionRef
from horarium.importers.arm import Scope
from horarium.importers.documents import SourceError
from horarium.importers.logicapp import read_logicapp, workflow_of


def import_logicapp(
    connection: Connection,
    source: Path,
    where: tuple[str | None, str | None, str | None, str | None],
    sets: tuple[str, ...],
    strict: bool,
    options: RunOptions,
) -> None:
    """`where`: subscription, resource group, collection, job (None: after the file)."""
    if not source.is_file():
        raise OneLineError(f"{source} is not a file (--from logicapp reads a workflow definition)")
    subscription, group, collection, job = where
    target = subscription_of(subscription)
    named_group = optional_group(group)
    if named_group is None or not collection:
        raise OneLineError("name where the job goes: --resource-group G --collection C")
    scope = Scope(target, named_group, None)
    now = datetime.now(UTC).replace(microsecond=0)
    try:
        found = read_logicapp(source, parse_sets(sets), (named_group, collection, job), scope, now)
    except SourceError as e:
        raise OneLineError(str(e)) from None
    documents = [workflow.document for workflow in found]
    checked_names(source, documents)
    lines = [line for workflow in found for line in workflow.not_carried]
    if strict and lines:
        raise OneLineError(f"{source}: --strict: not carried: {'; '.join(lines)} (nothing sent)")
    notes = [f"Not carried from {source}:", *(f"  {line}" for line in lines)] if lines else []
    where_text = f"the workflow {source} into {target}/{named_group}/{collection}"
    import_documents(connection, target, documents, where_text, options, notes)


def export_logicapp(
    connection: Connection,
    folder: Path,
    subscription: str,
    resource_group: str | None,
    collection: str | None,
) -> None:
    """One `{"definition": …}` file per job: `FOLDER/GROUP/COLLECTION/JOB.workflow.json`."""
    from horarium.cli.rest.exporting import fetch

    with connection.client() as client:
        fetched = fetch(client, subscription, resource_group, collection)
    written, skipped, notes = 0, 0, []
    for item in fetched:
        for body in item.jobs:
            name = short_name(body)
            workflow = workflow_of(body)
            label = f"{item.ref.resource_group}/{item.ref.name}/{name}"
            notes += [f"  {label}: {line}" for line in workflow.not_expressed]
            if workflow.definition is None:
                skipped += 1
                continue
            try:
                path = _path(folder, item.ref, name)
            except ValueError as e:
                raise OneLineError(str(e)) from None
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(dumps({"definition": workflow.definition}), encoding="utf-8")
            written += 1
    click.echo(
        f"Wrote {plural(written, 'workflow')} to {folder}"
        + (f"; {plural(skipped, 'job')} not written (below)." if skipped else ".")
    )
    if notes:
        click.echo("Not expressed in Logic Apps:")
        for line in notes:
            click.echo(line)


def _path(folder: Path, ref: CollectionRef, job: str) -> Path:
    """`FOLDER/GROUP/COLLECTION/JOB.workflow.json` (never a name of the export layout)."""
    parts = (
        file_name(ref.resource_group, "resource group"),
        file_name(ref.name, "collection"),
        f"{file_name(job, 'job')}.workflow.json",
    )
    return folder.joinpath(*parts)
