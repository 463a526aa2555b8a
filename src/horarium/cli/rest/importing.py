"""`horarium import DIR`: the collections, then their exclusion calendars, then the jobs (which
may list the calendars), of an export (or of files laid out the same way) PUT into a
subscription; `--from arm TEMPLATE` reads an ARM template instead (`arm_import`), through the
same `Importer`.

Idempotent by comparison: a resource whose document equals what the API answers for it (without
what only the service sets; secrets compared as the API shows them, left out or `***`) is left
alone, so a second import changes nothing, not even the start of a job's series. A job to create
needs its secrets in its file, a collection to create its notifications' secrets; one to replace
does not (the service keeps a stored secret while its target is unchanged). A resource whose
file carries secrets is sent when it is new or otherwise differs (`--resend-secrets`: always)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from horarium.cli.options import OneLineError
from horarium.cli.rest.connection import Connection, connection_options
from horarium.cli.rest.export_layout import (
    MANIFEST,
    CalendarFile,
    CollectionFile,
    JobFile,
    MonitorFile,
    calendar_document,
    collection_document,
    job_document,
    monitor_document,
    read_export,
    read_manifest,
)
from horarium.cli.rest.import_table import HEADERS, NEEDS_SECRET, WORDS, executions
from horarium.cli.rest.output import plural, print_table
from horarium.client import ApiRefused, CollectionRef, check_segment
from horarium.client.secret_fields import (
    SecretField,
    as_answered,
    collection_as_answered,
    collection_secret_fields,
    secret_fields,
)

if TYPE_CHECKING:
    from horarium.client import HorariumClient
    from horarium.client.rest import Written


class Outcome(StrEnum):
    CREATED = "created"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    FAILED = "failed"


class NotSent(Exception):
    """A resource that was not sent, and why (one line)."""


class SecretNeeded(NotSent):
    """A resource to create whose secrets are not all there (one line naming them)."""


EXPORT_HINT = "secrets are not exported: add them to the file"


@dataclass(frozen=True)
class Comparison:
    """How a document reads as the API would answer it, to compare with the API's answer
    (`collection_document` / `job_document` of the current resource)."""

    collection: Callable[[dict[str, Any]], dict[str, Any] | None]
    job: Callable[[dict[str, Any]], dict[str, Any] | None]


# An export's files are the API's answers: only their secrets differ from what it shows.
AS_EXPORTED = Comparison(
    collection=lambda document: collection_as_answered(collection_document(document)),
    job=lambda document: as_answered(job_document(document)),
)


@dataclass
class Tally:
    """What an import did, per kind of resource, and the failures in one line each."""

    collections: Counter[Outcome] = field(default_factory=Counter)
    jobs: Counter[Outcome] = field(default_factory=Counter)
    calendars: Counter[Outcome] = field(default_factory=Counter)
    monitors: Counter[Outcome] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    secrets_kept: int = 0  # unchanged jobs whose files carry secrets that were not sent
    collection_secrets_kept: int = 0  # the same, of collections (notification secrets)
    rows: list[list[str]] = field(default_factory=list)  # the dry-run table

    def summary(self, dry_run: bool) -> str:
        verbs = {
            Outcome.CREATED: "to create" if dry_run else "created",
            Outcome.REPLACED: "to replace" if dry_run else "replaced",
            Outcome.UNCHANGED: "unchanged",
        }

        def part(kind: str, counts: Counter[Outcome]) -> str:
            return f"{kind} " + ", ".join(f"{counts[o]} {verb}" for o, verb in verbs.items())

        calendars = f" {part('calendars', self.calendars)};" if self.calendars.total() else ""
        monitors = f" {part('monitors', self.monitors)};" if self.monitors.total() else ""
        return (
            f"{part('collections', self.collections)};{calendars} {part('jobs', self.jobs)};"
            f"{monitors} {len(self.failures)} failed"
        )


@dataclass(frozen=True)
class Importer:
    """PUTs what differs from the service's resources (`dry_run`: only compares)."""

    client: HorariumClient
    dry_run: bool
    resend_secrets: bool
    compare: Comparison = AS_EXPORTED
    disabled: bool = False  # every job imported Disabled (`--disabled`)

    def collection(self, ref: CollectionRef, file: CollectionFile, tally: Tally) -> Outcome:
        document = collection_document(file.document)
        fields = collection_secret_fields(document)
        carries = any(f.present for f in fields)
        current = self.client.find_collection(ref)
        if current is not None and collection_document(current) == self.compare.collection(
            document
        ):
            if not (carries and self.resend_secrets):
                tally.collection_secrets_kept += int(carries)
                return Outcome.UNCHANGED
        if current is None:
            _require(fields, EXPORT_HINT)
        if self.dry_run:
            return Outcome.CREATED if current is None else Outcome.REPLACED
        written = self.client.put_collection(ref, document)
        return Outcome.CREATED if written.created else Outcome.REPLACED

    def calendar(self, ref: CollectionRef, file: CalendarFile) -> Outcome:
        calendar = ref.calendar(file.name)
        found = self.client.find_calendar(calendar)
        return self._member(
            file, found, calendar_document, partial(self.client.put_calendar, calendar)
        )

    def monitor(self, ref: CollectionRef, file: MonitorFile) -> Outcome:
        """A monitor created here gets a new ping token (exports carry none)."""
        monitor = ref.monitor(file.name)
        found = self.client.find_monitor(monitor)
        return self._member(
            file, found, monitor_document, partial(self.client.put_monitor, monitor)
        )

    def _member(
        self,
        file: CalendarFile,
        current: dict[str, Any] | None,
        document_of: Callable[[dict[str, Any]], dict[str, Any]],
        put: Callable[[dict[str, Any]], Written],
    ) -> Outcome:
        """A calendar or monitor: PUT unless the service's answers the same."""
        document = document_of(file.document)
        if current is not None and document_of(current) == document:
            return Outcome.UNCHANGED
        if self.dry_run:
            return Outcome.CREATED if current is None else Outcome.REPLACED
        return Outcome.CREATED if put(document).created else Outcome.REPLACED

    def job(
        self, ref: CollectionRef, file: JobFile, tally: Tally, hint: str = EXPORT_HINT
    ) -> Outcome:
        """`hint`: what to do about a missing secret, after the fields it names."""
        document = job_document(file.document)
        if self.disabled:
            document = _disabled(document)
        fields = secret_fields(document)
        carries = any(f.present for f in fields)
        current = self.client.find_job(ref.job(file.name))
        if current is not None and job_document(current) == self.compare.job(document):
            if not (carries and self.resend_secrets):
                tally.secrets_kept += int(carries)
                return Outcome.UNCHANGED
        if current is None:
            _require(fields, hint)
        if self.dry_run:
            return Outcome.CREATED if current is None else Outcome.REPLACED
        written = self.client.put_job(ref.job(file.name), document)
        return Outcome.CREATED if written.created else Outcome.REPLACED


def _disabled(document: dict[str, Any]) -> dict[str, Any]:
    """The job `document` with its state Disabled (as the API answers it)."""
    properties = document.get("properties")
    if not isinstance(properties, dict):
        return document
    return {**document, "properties": {**properties, "state": "disabled"}}


def _require(fields: list[SecretField], hint: str) -> None:
    """Refuse to create a resource that lacks a secret it needs (`SecretNeeded`)."""
    missing = [f.path for f in fields if f.required and not f.present]
    if missing:
        raise SecretNeeded(f"needs {', '.join(missing)} ({hint})")


def attempt(
    tally: Tally, path: Path | str, work: Callable[[], Outcome], row: tuple[str, str]
) -> Outcome:
    """`work`'s outcome; a refusal (but an authentication failure, which ends the import) is
    counted as failed with its one line. `row`: the resource's label and executions, for the
    dry-run table."""
    action = "failed"
    try:
        outcome = work()
        action = WORDS[outcome]
    except ApiRefused as e:
        if e.status == 401:
            raise
        tally.failures.append(f"{path}: {e}")
        outcome = Outcome.FAILED
    except NotSent as e:
        tally.failures.append(f"{path}: {e}")
        outcome = Outcome.FAILED
        action = NEEDS_SECRET if isinstance(e, SecretNeeded) else action
    tally.rows.append([row[0], action, row[1]])
    return outcome


@contextmanager
def _progress(total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr when it is a terminal; otherwise nothing."""
    stream = sys.stderr
    if not stream.isatty():
        yield lambda: None
        return
    with click.progressbar(length=total, label="Importing", file=stream) as bar:
        yield lambda: bar.update(1)


def run_import(importer: Importer, subscription: str, found: list[CollectionFile]) -> Tally:
    """Collections first, each followed by its calendars, then its jobs and monitors (a PUT
    naming a calendar the collection lacks is refused); all skipped when their collection
    failed."""
    tally = Tally()
    total = sum(1 + len(c.calendars) + len(c.jobs) + len(c.monitors) for c in found)
    with _progress(total) as advance:
        for file in found:
            ref = CollectionRef(subscription, file.resource_group, file.name)
            label = f"{file.resource_group}/{file.name}"
            work: Callable[[], Outcome] = partial(importer.collection, ref, file, tally)
            outcome = attempt(tally, file.path, work, (label, "-"))
            tally.collections[outcome] += 1
            advance()
            calendars = _calendar_properties(file)
            for calendar in file.calendars:
                row = (f"{label}/calendars/{calendar.name}", "-")
                if outcome is Outcome.FAILED:
                    not_sent(tally, calendar.path, row)
                    tally.calendars[Outcome.FAILED] += 1
                else:
                    work = partial(importer.calendar, ref, calendar)
                    tally.calendars[attempt(tally, calendar.path, work, row)] += 1
                advance()
            for job in file.jobs:
                shown = "-"
                if importer.dry_run:
                    shown = executions(job_document(job.document), importer.disabled, calendars)
                row = (f"{label}/{job.name}", shown)
                if outcome is Outcome.FAILED:
                    not_sent(tally, job.path, row)
                    tally.jobs[Outcome.FAILED] += 1
                else:
                    work = partial(importer.job, ref, job, tally)
                    tally.jobs[attempt(tally, job.path, work, row)] += 1
                advance()
            for monitor in file.monitors:
                row = (f"{label}/monitors/{monitor.name}", "-")
                if outcome is Outcome.FAILED:
                    not_sent(tally, monitor.path, row)
                    tally.monitors[Outcome.FAILED] += 1
                else:
                    work = partial(importer.monitor, ref, monitor)
                    tally.monitors[attempt(tally, monitor.path, work, row)] += 1
                advance()
    return tally


def not_sent(tally: Tally, where: Path | str, row: tuple[str, str]) -> None:
    """A resource of a collection that failed: a failure line and its table row."""
    tally.failures.append(f"{where}: not sent (its collection failed)")
    tally.rows.append([row[0], "not sent", row[1]])


def _calendar_properties(file: CollectionFile) -> dict[str, Any]:
    """The collection's calendars by name, as a job's executions need them."""
    return {c.name: calendar_document(c.document).get("properties") or {} for c in file.calendars}


def _names_checked(found: list[CollectionFile]) -> None:
    for file in found:
        try:
            check_segment(file.resource_group, "resource group")
            check_segment(file.name, "collection")
            for calendar in file.calendars:
                check_segment(calendar.name, "calendar")
            for monitor in file.monitors:
                check_segment(monitor.name, "monitor")
            for job in file.jobs:
                check_segment(job.name, "job")
        except ValueError as e:
            raise OneLineError(f"{file.path}: {e}") from None


@click.command(name="import", short_help="PUT the collections and jobs of an export or template.")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--from",
    "source_kind",
    type=click.Choice(["export", "arm", "terraform", "logicapp", "functions"]),
    default="export",
    show_default=True,
    help="What SOURCE is: a folder of `horarium export`, an ARM template (a JSON file),"
    " `terraform show -json` output (a state or a plan), a Logic Apps workflow definition, or"
    " an Azure Functions project (or WebJob) folder.",
)
@click.option(
    "--subscription",
    envvar="HORARIUM_SUBSCRIPTION",
    show_envvar=True,
    default=None,
    help="The subscription to import into (an export: default the exported one).",
)
@click.option(
    "--resource-group",
    envvar="HORARIUM_RESOURCE_GROUP",
    show_envvar=True,
    default=None,
    help="ARM: the resource group to import into (what resourceGroup() answers); Terraform:"
    " instead of each resource's resource_group_name.",
)
@click.option(
    "--collection",
    envvar="HORARIUM_COLLECTION",
    show_envvar=True,
    default=None,
    help="Logic Apps, Functions: the collection the jobs go into (it must exist).",
)
@click.option(
    "--target",
    default=None,
    metavar="URL",
    help="Functions: the URL each job POSTs to ({name}: the function's) instead of the"
    " function's admin endpoint.",
)
@click.option(
    "--job",
    "job_name",
    default=None,
    help="Logic Apps: the job's name (default: the file's name without .workflow.json or .json).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Logic Apps: refuse a workflow with anything the job cannot carry (send nothing).",
)
@click.option(
    "--location",
    default=None,
    help="ARM: the resource group's location (what resourceGroup().location answers).",
)
@click.option(
    "--parameters",
    "parameters_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="ARM: a parameters file (azuredeploy.parameters.json).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="NAME=VALUE",
    help="ARM: a parameter's value (over the parameters file); Terraform: an attribute's value"
    " (ADDRESS.PATH=VALUE, for a sensitive value the file lacks); Logic Apps: a workflow"
    " parameter's value; Functions: an app setting (over local.settings.json); repeatable.",
)
@click.option(
    "--utc-now",
    default=None,
    metavar="TIME",
    help="ARM: what utcNow() answers in parameter defaults (ISO 8601; default: now).",
)
@click.option(
    "--resend-secrets",
    is_flag=True,
    help="Also PUT unchanged collections and jobs that carry secrets (to change one).",
)
@click.option(
    "--disabled",
    is_flag=True,
    help="Import every job Disabled (nothing starts until `jobs enable`): for a copy beside"
    " the service it came from.",
)
@click.option("--dry-run", is_flag=True, help="Compare only; send nothing.")
@connection_options
def import_(
    connection: Connection,
    source: Path,
    source_kind: str,
    subscription: str | None,
    resource_group: str | None,
    collection: str | None,
    target: str | None,
    job_name: str | None,
    strict: bool,
    location: str | None,
    parameters_file: Path | None,
    sets: tuple[str, ...],
    utc_now: str | None,
    resend_secrets: bool,
    disabled: bool,
    dry_run: bool,
) -> None:
    """Import the collections, calendars and jobs of an export, or what another source
    defines (`--from`: an ARM template, Terraform output, a Logic Apps workflow, a Functions
    project), PUTting what differs.

    Collections first, then their calendars, then their jobs (a template's in dependsOn
    order); a resource that equals its source is left alone, so importing twice changes
    nothing the second time."""
    _only_own_options(source_kind)
    from horarium.cli.rest.source_import import RunOptions

    run = RunOptions(dry_run, resend_secrets, disabled)
    if source_kind == "arm":
        from horarium.cli.rest.arm_import import ArmOptions, import_arm

        options = ArmOptions(source, parameters_file, sets, subscription, resource_group)
        import_arm(connection, options, location, utc_now, resend_secrets, dry_run, disabled)
    elif source_kind == "terraform":
        from horarium.cli.rest.terraform_import import import_terraform

        import_terraform(connection, source, sets, subscription, resource_group, run)
    elif source_kind == "logicapp":
        from horarium.cli.rest.logicapp import import_logicapp

        where = (subscription, resource_group, collection, job_name)
        import_logicapp(connection, source, where, sets, strict, run)
    elif source_kind == "functions":
        from horarium.cli.rest.functions_import import import_functions

        place = (subscription, resource_group, collection)
        import_functions(connection, source, place, sets, target, run)
    elif not source.is_dir():
        raise OneLineError(f"{source} is not a folder (name a file's kind with --from)")
    else:
        import_export(connection, source, subscription, resend_secrets, dry_run, disabled)


# The options of `import` that only some sources read (parameter name -> flag, sources).
SOURCE_OPTIONS = {
    "resource_group": ("--resource-group", ("arm", "terraform", "logicapp", "functions")),
    "sets": ("--set", ("arm", "terraform", "logicapp", "functions")),
    "location": ("--location", ("arm",)),
    "parameters_file": ("--parameters", ("arm",)),
    "utc_now": ("--utc-now", ("arm",)),
    "collection": ("--collection", ("logicapp", "functions")),
    "job_name": ("--job", ("logicapp",)),
    "strict": ("--strict", ("logicapp",)),
    "target": ("--target", ("functions",)),
}


def _only_own_options(source_kind: str) -> None:
    """A usage error for an option of another source given on the command line (an
    environment variable such as HORARIUM_RESOURCE_GROUP, set for other commands, is not
    one)."""
    context = click.get_current_context()
    for name, (flag, sources) in SOURCE_OPTIONS.items():
        given = context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
        if given and source_kind not in sources:
            raise OneLineError(f"{flag} is not for --from {source_kind}")


def import_export(
    connection: Connection,
    folder: Path,
    subscription: str | None,
    resend_secrets: bool,
    dry_run: bool,
    disabled: bool = False,
) -> None:
    """`import DIR`: an export's files (`disabled`: every job imported Disabled)."""
    manifest = read_manifest(folder)
    if manifest is None:
        raise OneLineError(f"{folder} is not a Horarium export (it has no {MANIFEST})")
    target = subscription or str(manifest["subscription"])
    found = read_export(folder)
    _names_checked(found)
    with connection.client() as client:
        importer = Importer(client, dry_run, resend_secrets, disabled=disabled)
        tally = run_import(importer, target, found)
    if dry_run:
        print_table(HEADERS, tally.rows)
    report(tally, f"{folder} into the subscription {target}", dry_run)


def report(tally: Tally, what: str, dry_run: bool, *, files: bool = True) -> None:
    """The failures (stderr), the summary line, what was not sent; exit code 1 on a failure."""
    for line in tally.failures:
        click.echo(f"Error: {line}", err=True)
    verb = "Compared" if dry_run else "Imported"
    click.echo(f"{verb} {what}: {tally.summary(dry_run)}.")
    kept = [
        plural(n, kind)
        for n, kind in (
            (tally.collection_secrets_kept, "unchanged collection"),
            (tally.secrets_kept, "unchanged job"),
        )
        if n
    ]
    if kept:
        where = "files of " if files else ""
        click.echo(
            f"Secrets in the {where}{' and '.join(kept)} were not sent"
            " (--resend-secrets sends them)."
        )
    if tally.failures:
        raise SystemExit(1)
