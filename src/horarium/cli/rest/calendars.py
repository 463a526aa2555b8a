"""`horarium calendars list|show|put|delete` over the REST API: a collection's exclusion
calendars (a Horarium extension, docs/recurrence.md §8)."""

from __future__ import annotations

from functools import partial
from typing import IO

import click

from horarium.cli.rest.calendar_views import (
    CALENDAR_HEADERS,
    calendar_pairs,
    calendar_row,
    summary,
    users_by_calendar,
)
from horarium.cli.rest.confirming import confirm_delete, yes_option
from horarium.cli.rest.connection import Connection, connection_options
from horarium.cli.rest.json_input import document_name, read_document, resource_body
from horarium.cli.rest.naming import calendar_named, calendar_options, collection_options
from horarium.cli.rest.output import emit_json, json_option, note, print_listing, print_resource
from horarium.client import CalendarRef, CollectionRef


@click.group()
def calendars() -> None:
    """Exclusion calendars of a collection, through the REST API (--url, --token)."""


@calendars.command(name="list")
@collection_options(positional=False)
@json_option
@connection_options
def list_calendars(connection: Connection, collection: CollectionRef, as_json: bool) -> None:
    """The calendars of a collection: what each excludes, the jobs that list it."""
    with connection.client() as client:
        listing = client.list_calendars(collection)
        users = {} if as_json else users_by_calendar(client.list_jobs(collection).value)
    empty = f"No calendars in the collection {collection}."
    print_listing(
        listing, as_json, CALENDAR_HEADERS, partial(calendar_row, users=users), empty=empty
    )


@calendars.command()
@calendar_options
@json_option
@connection_options
def show(connection: Connection, calendar: CalendarRef, as_json: bool) -> None:
    """One calendar: its weekends, holidays, dates, ranges, iCalendar size, and its jobs."""
    with connection.client() as client:
        body = client.get_calendar(calendar)
        users = {} if as_json else users_by_calendar(client.list_jobs(calendar.collection).value)
    print_resource(body, as_json, partial(calendar_pairs, users=users))


@calendars.command()
@click.argument("file", type=click.File("r"))
@click.option(
    "--calendar",
    default=None,
    help="Calendar name (default: the file's 'name', else the file's name without .json).",
)
@collection_options(positional=False)
@json_option
@connection_options
def put(
    connection: Connection,
    collection: CollectionRef,
    file: IO[str],
    calendar: str | None,
    as_json: bool,
) -> None:
    """Create or replace a calendar from FILE ('-': stdin): the resource's JSON, or only its
    properties ({"weekends": true, "dates": [...], ...}). The jobs that list it are scheduled
    again."""
    document = read_document(file, "calendar")
    ref = collection.calendar(document_name(document, calendar, calendar_named, "--calendar NAME"))
    with connection.client() as client:
        written = client.put_calendar(ref, resource_body(document))
    if as_json:
        emit_json(written.body)
    else:
        verb = "Created" if written.created else "Replaced"
        note(f"{verb} the calendar {ref} (excludes {summary(written.body.get('properties'))}).")


@calendars.command()
@calendar_options
@yes_option
@connection_options
def delete(connection: Connection, calendar: CalendarRef, yes: bool) -> None:
    """Delete a calendar (the API refuses while a job lists it)."""
    confirm_delete(f"the calendar {calendar}", yes)
    with connection.client() as client:
        client.delete_calendar(calendar)
    note(f"Deleted the calendar {calendar}.")
