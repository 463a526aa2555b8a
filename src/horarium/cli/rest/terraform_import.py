"""`horarium import --from terraform FILE`: the `azurerm_scheduler_job_collection` and
`azurerm_scheduler_job` resources of `terraform show -json` output (a state or a plan) PUT into
`--subscription`, each in its own `resource_group_name` (or `--resource-group`).

The whole file is read first (`horarium.importers.terraform`): a resource that cannot be mapped
stops the import, naming its address, before anything is sent. Then `source_import` compares
and PUTs, as for every source; a job whose sensitive value the file does not show is named with
the `--set ADDRESS.PATH=…` that gives it."""

from __future__ import annotations

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
from horarium.importers.documents import SourceError
from horarium.importers.terraform import read_terraform


def import_terraform(
    connection: Connection,
    source: Path,
    sets: tuple[str, ...],
    subscription: str | None,
    resource_group: str | None,
    options: RunOptions,
) -> None:
    """Read the whole file, then compare and PUT each resource (collections first)."""
    if not source.is_file():
        raise OneLineError(f"{source} is not a file (--from terraform reads terraform show -json)")
    target = subscription_of(subscription)
    group = optional_group(resource_group)
    try:
        found = read_terraform(source, parse_sets(sets), group)
    except SourceError as e:
        raise OneLineError(str(e)) from None
    checked_names(source, found.documents)
    where = f"the Terraform {found.kind} {source} into {target}"
    import_documents(connection, target, found.documents, where, options)
