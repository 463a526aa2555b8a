"""`horarium monitors put|list|show|delete|checkins` over the REST API: a collection's check-in
monitors (a Horarium extension, docs/monitors.md)."""

from __future__ import annotations

from typing import IO

import click

from horarium.cli.rest.confirming import confirm_delete, yes_option
from horarium.cli.rest.connection import Connection, connection_options
from horarium.cli.rest.json_input import document_name, read_document, resource_body
from horarium.cli.rest.monitor_views import (
    CHECK_IN_HEADERS,
    MONITOR_HEADERS,
    check_in_row,
    monitor_pairs,
    monitor_row,
)
from horarium.cli.rest.naming import collection_options, monitor_named, monitor_options
from horarium.cli.rest.output import (
    emit_json,
    json_option,
    note,
    print_listing,
    print_resource,
    print_table,
)
from horarium.client import CollectionRef, MonitorRef


@click.group()
def monitors() -> None:
    """Check-in monitors of a collection, through the REST API (--url, --token)."""


@monitors.command(name="list")
@collection_options(positional=False)
@json_option
@connection_options
def list_monitors(connection: Connection, collection: CollectionRef, as_json: bool) -> None:
    """The monitors of a collection: status, last check-in, next expected."""
    with connection.client() as client:
        listing = client.list_monitors(collection)
    empty = f"No monitors in the collection {collection}."
    print_listing(listing, as_json, MONITOR_HEADERS, monitor_row, empty=empty)


@monitors.command()
@monitor_options
@json_option
@connection_options
def show(connection: Connection, monitor: MonitorRef, as_json: bool) -> None:
    """One monitor: when check-ins are expected, its status and its last check-in."""
    with connection.client() as client:
        body = client.get_monitor(monitor)
    print_resource(body, as_json, monitor_pairs)


@monitors.command()
@click.argument("file", type=click.File("r"))
@click.option(
    "--monitor",
    default=None,
    help="Monitor name (default: the file's 'name', else the file's name without .json).",
)
@collection_options(positional=False)
@json_option
@connection_options
def put(
    connection: Connection,
    collection: CollectionRef,
    file: IO[str],
    monitor: str | None,
    as_json: bool,
) -> None:
    """Create or replace a monitor from FILE ('-': stdin): the resource's JSON, or only its
    properties ({"recurrence": {...}, "grace": "00:05:00"}). Creating one prints its ping URL on
    stdout: the only time it is shown (`POST …/regeneratePingUrl` makes a new one)."""
    document = read_document(file, "monitor")
    ref = collection.monitor(document_name(document, monitor, monitor_named, "--monitor NAME"))
    with connection.client() as client:
        written = client.put_monitor(ref, resource_body(document))
    if as_json:
        emit_json(written.body)
        return
    properties = written.body.get("properties") or {}
    verb = "Created" if written.created else "Replaced"
    note(f"{verb} the monitor {ref} (status {properties.get('status')}).")
    if properties.get("pingUrl"):
        note("Its ping URL (shown only now; keep it secret):")
        click.echo(properties["pingUrl"])


@monitors.command()
@monitor_options
@yes_option
@connection_options
def delete(connection: Connection, monitor: MonitorRef, yes: bool) -> None:
    """Delete a monitor and its check-ins."""
    confirm_delete(f"the monitor {monitor}", yes)
    with connection.client() as client:
        client.delete_monitor(monitor)
    note(f"Deleted the monitor {monitor}.")


@monitors.command()
@monitor_options
@click.option("--top", type=click.IntRange(1, 100), default=None, help="Entries per page.")
@click.option("--skip", type=click.IntRange(min=0), default=0, help="Entries to skip first.")
@json_option
@connection_options
def checkins(
    connection: Connection, monitor: MonitorRef, top: int | None, skip: int, as_json: bool
) -> None:
    """A monitor's check-ins, newest first: time, kind, exit code, body."""
    with connection.client() as client:
        listing = client.check_ins(monitor, top=top, skip=skip)
    if as_json:
        emit_json(listing.as_json())
        return
    if listing.value:
        print_table(CHECK_IN_HEADERS, [check_in_row(e) for e in listing.value])
    else:
        note(f"No check-ins for the monitor {monitor}.")
    if listing.next_link is not None:
        note(f"More check-ins follow: --skip {skip + len(listing.value)}.")
