"""`horarium import --from functions FOLDER`: the timer triggers of an Azure Functions project
(and WebJob schedules) as jobs of `--collection`, POSTing to each function's admin endpoint or
to `--target` (`horarium.importers.functions`). A schedule finer than a minute needs a
collection of the Seconds plan: on Azure's plans the API refuses it with its 409."""

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
from horarium.importers.functions import read_functions


def import_functions(
    connection: Connection,
    source: Path,
    where: tuple[str | None, str | None, str | None],
    sets: tuple[str, ...],
    target: str | None,
    options: RunOptions,
) -> None:
    """`where`: subscription, resource group, collection."""
    if not source.is_dir():
        raise OneLineError(f"{source} is not a folder (--from functions reads a project folder)")
    subscription, group, collection = where
    named_group = optional_group(group)
    if named_group is None or not collection:
        raise OneLineError("name where the jobs go: --resource-group G --collection C")
    if target is not None and not target.lower().startswith(("http://", "https://")):
        raise OneLineError(f"--target {target!r}: an http:// or https:// URL")
    subscription = subscription_of(subscription)
    try:
        found = read_functions(source, parse_sets(sets), (named_group, collection), target)
    except SourceError as e:
        raise OneLineError(str(e)) from None
    documents = [timer.document for timer in found]
    checked_names(source, documents)
    lines = [line for timer in found for line in timer.not_carried]
    notes = [f"Not carried from {source}:", *(f"  {line}" for line in lines)] if lines else []
    where_text = f"the timers of {source} into {subscription}/{named_group}/{collection}"
    import_documents(connection, subscription, documents, where_text, options, notes)
