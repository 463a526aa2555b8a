"""`horarium import --from arm TEMPLATE`: the Scheduler resources of an ARM template PUT into
`--subscription` / `--resource-group`, in dependsOn order.

The whole template is evaluated first (`horarium.importers.arm`): an expression it cannot
evaluate stops the import, naming the resource and the expression, before anything is sent.
Then, as `import DIR` does: each resource is compared with the API's answer (in the API's own
spelling, `horarium.importers.canonical`) and left alone when equal, so a second import changes
nothing; a job whose secret comes from a secure parameter without a value is not created (the
API needs it), and is named with the parameter to give; the API's refusals (a plan's 409
included) are one line each. `--dry-run` prints what it would do as a table, with the first
three executions of each job on its own clock."""

from __future__ import annotations

from collections.abc import Callable
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
from horarium.cli.rest.naming import optional_group, subscription_of
from horarium.cli.rest.output import print_table
from horarium.client import ApiRefused, CollectionRef, check_segment
from horarium.importers.arm import Planned, Scope, TemplateError, read_arm
from horarium.importers.canonical import collection_as_answered, job_as_answered
from horarium.recurrence import RecurrenceError, parse_instant, plan, preview

SHOWN_EXECUTIONS = 3
CANONICAL = Comparison(collection=collection_as_answered, job=job_as_answered)
ACTIONS = {
    Outcome.CREATED: ("create", "created"),
    Outcome.REPLACED: ("replace", "replaced"),
    Outcome.UNCHANGED: ("unchanged", "unchanged"),
    Outcome.FAILED: ("failed", "failed"),
}
NEEDS_SECRET = "needs secret"


@dataclass(frozen=True)
class ArmOptions:
    """What names the template and where it goes."""

    template: Path
    parameters: Path | None
    sets: tuple[str, ...]
    subscription: str | None
    resource_group: str | None


@dataclass(frozen=True)
class Row:
    resource: str
    action: str
    executions: str


def import_arm(
    connection: Connection,
    options: ArmOptions,
    location: str | None,
    utc_now: str | None,
    resend_secrets: bool,
    dry_run: bool,
    disabled: bool = False,
) -> None:
    """Read the whole template, then compare and PUT each resource; print the dry-run table,
    the failures and the summary (exit code 1 when anything failed). `disabled`: every job
    imported Disabled."""
    template = options.template
    if not template.is_file():
        raise OneLineError(f"{template} is not a file (--from arm reads an ARM template)")
    group = optional_group(options.resource_group)
    if group is None:
        raise OneLineError("name the resource group: --resource-group G")
    scope = Scope(subscription_of(options.subscription), group, location)
    now = _now(utc_now)
    try:
        found = read_arm(template, options.parameters, _sets(options.sets), scope, now)
    except TemplateError as e:
        raise OneLineError(str(e)) from None
    for item in found.items:
        for name, what in zip(item.resource.names, ("collection", "job"), strict=False):
            try:
                check_segment(name, what)
            except ValueError as e:
                raise OneLineError(f"{template}: {item.resource.label}: {e}") from None
    with connection.client() as client:
        importer = Importer(client, dry_run, resend_secrets, CANONICAL, disabled)
        tally, rows = _run(importer, scope, found.items)
    if dry_run:
        print_table(
            ["RESOURCE", "ACTION", f"FIRST {SHOWN_EXECUTIONS} EXECUTIONS (the job's time zone)"],
            [[row.resource, row.action, row.executions] for row in rows],
        )
    if found.used_utc_now and utc_now is None:
        click.echo(
            f"Note: utcNow() in a parameter default was {now:%Y-%m-%dT%H:%M:%SZ}; another import"
            " evaluates it again (--utc-now pins it)."
        )
    where = f"{template} into {scope.subscription}/{scope.resource_group}"
    report(tally, where, dry_run, files=False)


def _now(given: str | None) -> datetime:
    if given is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        return parse_instant(given)
    except RecurrenceError:
        raise OneLineError(f"--utc-now: {given!r} is not an ISO 8601 date-time") from None


def _sets(given: tuple[str, ...]) -> dict[str, str]:
    values: dict[str, str] = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise OneLineError(f"--set {item!r}: write NAME=VALUE")
        values[name.strip()] = value
    return values


def _run(importer: Importer, scope: Scope, items: list[Planned]) -> tuple[Tally, list[Row]]:
    """Each resource in order; a job of a collection that failed is not sent."""
    tally, rows = Tally(), []
    failed: set[str] = set()
    for item in items:
        resource = item.resource
        ref = CollectionRef(scope.subscription, scope.resource_group, resource.names[0])
        label = f"{scope.resource_group}/{resource.path}"
        counts = tally.collections if resource.kind == "collection" else tally.jobs
        if resource.names[0].lower() in failed:
            tally.failures.append(f"{label}: not sent (its collection failed)")
            counts[Outcome.FAILED] += 1
            rows.append(Row(label, "not sent", _executions(item, importer.dry_run)))
            continue
        work = partial(_put, importer, ref, item, tally)
        outcome, action = _attempt(tally, label, work, importer.dry_run)
        counts[outcome] += 1
        if outcome is Outcome.FAILED and resource.kind == "collection":
            failed.add(resource.names[0].lower())
        rows.append(Row(label, action, _executions(item, importer.dry_run)))
    return tally, rows


def _put(importer: Importer, ref: CollectionRef, item: Planned, tally: Tally) -> Outcome:
    """Compare one resource with the service's, and PUT it when it differs."""
    resource = item.resource
    if resource.kind == "collection":
        file = CollectionFile(ref.resource_group, ref.name, Path(), item.body)
        return importer.collection(ref, file, tally)
    job = JobFile(resource.names[1], Path(), item.body)
    return importer.job(ref, job, tally, _hint(item))


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


def _hint(item: Planned) -> str:
    names = sorted(set(item.unseen.values()))
    if not names:
        return "the template gives no value for it"
    given = " ".join(f"--set {name}=…" for name in names)
    which = "parameter " + ", ".join(repr(n) for n in names)
    return f"the secure {which} has no value: {given} or --parameters"


def _executions(item: Planned, dry_run: bool) -> str:
    """A job's first executions if created now, on its own clock (`-` for a collection)."""
    if not dry_run or item.resource.kind != "job":
        return "-"
    shown = job_as_answered(item.body) or item.body  # the API's spelling, as the engine reads it
    properties: Any = shown.get("properties")
    if not isinstance(properties, dict):
        return "-"
    now = datetime.now(UTC)
    try:
        zone = plan(properties, created=now).zone
        found = preview(properties, now=now, count=SHOWN_EXECUTIONS)
    except (RecurrenceError, TypeError, ValueError) as e:
        return f"invalid: {e}"
    if not found:
        return "none (the series has ended)"
    return ", ".join(f"{instant.astimezone(zone):%Y-%m-%d %H:%M %Z}" for instant in found)
