"""`horarium import --from arm TEMPLATE`: the Scheduler resources of an ARM template PUT into
`--subscription` / `--resource-group`, in dependsOn order.

The whole template is evaluated first (`horarium.importers.arm`): an expression it cannot
evaluate stops the import, naming the resource and the expression, before anything is sent.
Then `source_import` compares and PUTs, as for every source; a job whose secret comes from a
secure parameter without a value is named with the parameter to give."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from horarium.cli.options import OneLineError
from horarium.cli.rest.connection import Connection
from horarium.cli.rest.naming import optional_group, subscription_of
from horarium.cli.rest.source_import import (
    RunOptions,
    checked_names,
    import_documents,
    parse_sets,
)
from horarium.importers.arm import Planned, Scope, read_arm
from horarium.importers.documents import Document, Kind, SourceError
from horarium.recurrence import RecurrenceError, parse_instant


@dataclass(frozen=True)
class ArmOptions:
    """What names the template and where it goes."""

    template: Path
    parameters: Path | None
    sets: tuple[str, ...]
    subscription: str | None
    resource_group: str | None


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
        found = read_arm(template, options.parameters, parse_sets(options.sets), scope, now)
    except SourceError as e:
        raise OneLineError(str(e)) from None
    documents = [_document(scope, item) for item in found.items]
    checked_names(template, documents)
    notes = []
    if found.used_utc_now and utc_now is None:
        notes.append(
            f"Note: utcNow() in a parameter default was {now:%Y-%m-%dT%H:%M:%SZ}; another import"
            " evaluates it again (--utc-now pins it)."
        )
    where = f"{template} into {scope.subscription}/{scope.resource_group}"
    run = RunOptions(dry_run, resend_secrets, disabled)
    import_documents(connection, scope.subscription, documents, where, run, notes)


def _now(given: str | None) -> datetime:
    if given is None:
        return datetime.now(UTC).replace(microsecond=0)
    try:
        return parse_instant(given)
    except RecurrenceError:
        raise OneLineError(f"--utc-now: {given!r} is not an ISO 8601 date-time") from None


def _document(scope: Scope, item: Planned) -> Document:
    resource = item.resource
    kind: Kind = "collection" if resource.kind == "collection" else "job"
    return Document(kind, scope.resource_group, resource.names, item.body, _hint(item))


def _hint(item: Planned) -> str:
    names = sorted(set(item.unseen.values()))
    if not names:
        return "the template gives no value for it"
    given = " ".join(f"--set {name}=…" for name in names)
    which = "parameter " + ", ".join(repr(n) for n in names)
    return f"the secure {which} has no value: {given} or --parameters"
