"""`horarium export DIR`: the collections, exclusion calendars, jobs and check-in monitors of a
subscription (or of one resource group or collection) as files (layout:
`horarium.cli.rest.export_layout`). Secrets are not in them (jobs' secrets, collections'
notification secrets): the API never returns them; the output names every file that needs them
again. Nor are monitors' ping tokens: a monitor
imported anew gets a new one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from horarium.cli.options import OneLineError
from horarium.cli.rest.collections import resource_group_of
from horarium.cli.rest.connection import Connection, RequestFailed, connection_options
from horarium.cli.rest.export_layout import (
    MANIFEST,
    calendar_document,
    calendar_path,
    collection_document,
    collection_path,
    dumps,
    job_document,
    job_path,
    monitor_document,
    monitor_path,
    read_manifest,
    remove_stale,
    write_manifest,
)
from horarium.cli.rest.job_views import short_name
from horarium.cli.rest.naming import scope_options
from horarium.cli.rest.output import plural
from horarium.client import CollectionRef
from horarium.client.secret_fields import SecretField, collection_secret_fields, secret_fields

if TYPE_CHECKING:
    from horarium.client import HorariumClient

FINISHED = ("completed", "faulted")


@dataclass(frozen=True)
class Fetched:
    """A collection as the API answered it, with its jobs and calendars."""

    ref: CollectionRef
    body: dict[str, Any]
    jobs: list[dict[str, Any]]
    calendars: list[dict[str, Any]] = field(default_factory=list)
    monitors: list[dict[str, Any]] = field(default_factory=list)


def fetch(
    client: HorariumClient, subscription: str, group: str | None, collection: str | None
) -> list[Fetched]:
    """Everything to export, read before anything is written."""
    if group is not None and collection is not None:
        bodies = [client.get_collection(CollectionRef(subscription, group, collection))]
    else:
        bodies = client.list_collections(subscription, group).value
    found = []
    for body in bodies:
        ref = CollectionRef(subscription, resource_group_of(body), str(body.get("name")))
        jobs = client.list_jobs(ref).value
        calendars = client.list_calendars(ref).value
        found.append(Fetched(ref, body, jobs, calendars, client.list_monitors(ref).value))
    return sorted(found, key=lambda f: (f.ref.resource_group.lower(), f.ref.name.lower()))


def _prepare(root: Path, subscription: str) -> None:
    """`root` exists and is empty or a previous export of the same subscription."""
    if root.is_dir() and any(root.iterdir()):
        manifest = read_manifest(root)
        if manifest is None:
            raise OneLineError(
                f"{root} is not empty and holds no Horarium export ({MANIFEST});"
                " export into a new or empty folder"
            )
        if str(manifest["subscription"]).lower() != subscription.lower():
            raise OneLineError(
                f"{root} holds an export of the subscription {manifest['subscription']};"
                " export into another folder"
            )
    root.mkdir(parents=True, exist_ok=True)


def _write(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(document), encoding="utf-8")
    return path


@dataclass
class Report:
    """What an export wrote: counts, finished jobs left out, files that need secrets."""

    collections: int = 0
    jobs: int = 0
    calendars: int = 0
    monitors: int = 0
    finished: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    removed: int = 0


def _shown(field: str) -> str:
    return f"{field} (its *** parts)" if field.endswith(".uri") else field


def _secrets_needed(path: Path, secrets: list[SecretField]) -> str | None:
    """`FILE: field, field (and field, if …)` for a resource whose secrets must be added."""
    fields = [f for f in secrets if not f.present]
    required = [_shown(f.path) for f in fields if f.required]
    optional = [_shown(f.path) for f in fields if not f.required]
    if not fields:
        return None
    line = f"{path}: {', '.join(required)}"
    if optional:
        line += f" (and {', '.join(optional)}, if the certificate has one)"
    return line


def write_export(root: Path, subscription: str, fetched: list[Fetched], scope: Path) -> Report:
    """Write the files of `fetched`; remove the layout's files under `scope` not written."""
    report = Report()
    write_manifest(root, subscription)
    written: set[Path] = set()
    for item in fetched:
        group, name = item.ref.resource_group, item.ref.name
        document = collection_document(item.body)
        path = _write(collection_path(root, group, name), document)
        written.add(path)
        report.collections += 1
        needed = _secrets_needed(path, collection_secret_fields(document))
        if needed:
            report.secrets.append(needed)
        for body in item.calendars:
            path = calendar_path(root, group, name, short_name(body))
            written.add(_write(path, calendar_document(body)))
            report.calendars += 1
        for body in item.monitors:
            path = monitor_path(root, group, name, short_name(body))
            written.add(_write(path, monitor_document(body)))
            report.monitors += 1
        for body in item.jobs:
            job = short_name(body)
            state = str((body.get("properties") or {}).get("state", "")).lower()
            if state in FINISHED:
                report.finished.append(f"{item.ref}/{job} ({state.capitalize()})")
                continue
            document = job_document(body)
            path = _write(job_path(root, group, name, job), document)
            written.add(path)
            report.jobs += 1
            needed = _secrets_needed(path, secret_fields(document))
            if needed:
                report.secrets.append(needed)
    report.removed = len(remove_stale(scope, written))
    return report


def _print(report: Report, what: str, root: Path) -> None:
    calendars = f", {plural(report.calendars, 'calendar')}" if report.calendars else ""
    monitors = f", {plural(report.monitors, 'monitor')}" if report.monitors else ""
    click.echo(
        f"Exported {plural(report.collections, 'collection')}{calendars}{monitors} and"
        f" {plural(report.jobs, 'job')} of {what} to {root}."
    )
    if report.removed:
        click.echo(f"Removed {plural(report.removed, 'file')} of resources that no longer exist.")
    if report.finished:
        click.echo("Not exported, finished (an import would run them again):")
        for line in report.finished:
            click.echo(f"  {line}")
    if report.secrets:
        click.echo(
            "Secrets are not exported (the API never returns them). To create these resources"
            " from the files (after a delete, or in another subscription), add to each:"
        )
        for line in report.secrets:
            click.echo(f"  {line}")


@click.command(short_help="Write collections, calendars and jobs to JSON files (no secrets).")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--to",
    "target",
    type=click.Choice(["export", "logicapp"]),
    default="export",
    show_default=True,
    help="What to write: Horarium's export layout, or one Logic Apps workflow definition per job.",
)
@scope_options(collection=True)
@connection_options
def export(
    connection: Connection,
    folder: Path,
    target: str,
    subscription: str,
    resource_group: str | None,
    collection: str | None,
) -> None:
    """Export collections, calendars and jobs to FOLDER as JSON files (no secrets).

    The collections (with their exclusion calendars) and jobs of a subscription, or of one
    --resource-group, or of one --collection: one file per resource, in the layout
    `horarium import` reads. `--to logicapp`: one workflow definition per job
    (FOLDER/GROUP/COLLECTION/JOB.workflow.json), with what each cannot express."""
    if target == "logicapp":
        from horarium.cli.rest.logicapp import export_logicapp

        export_logicapp(connection, folder, subscription, resource_group, collection)
        return
    _prepare(folder, subscription)
    with connection.client() as client:
        fetched = fetch(client, subscription, resource_group, collection)
    scope, what = folder, f"the subscription {subscription}"
    if resource_group is not None:
        scope, what = folder / resource_group, f"{subscription}/{resource_group}"
        if collection is not None:
            scope, what = scope / collection, f"{what}/{collection}"
    try:
        report = write_export(folder, subscription, fetched, scope)
    except ValueError as e:
        raise RequestFailed(str(e)) from None
    _print(report, what, folder)
