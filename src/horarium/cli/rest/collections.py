"""`horarium collections list|show|upcoming|put|delete|enable|disable` over the REST API."""

from __future__ import annotations

import re
from typing import IO, Any
from zoneinfo import ZoneInfo

import click

from horarium.cli.options import OneLineError
from horarium.cli.rest.confirming import confirm_delete, yes_option
from horarium.cli.rest.connection import Connection, connection_options
from horarium.cli.rest.job_views import pause_pairs, paused_state
from horarium.cli.rest.json_input import read_document
from horarium.cli.rest.naming import collection_options, scope_options
from horarium.cli.rest.output import (
    NONE,
    dig,
    emit_json,
    json_option,
    note,
    print_listing,
    print_resource,
    text,
)
from horarium.cli.rest.timeline import instant_param, print_timeline, read_zone
from horarium.client import CollectionRef

SKUS = ("Free", "Standard", "P10Premium", "P20Premium", "Seconds")
COLLECTION_HEADERS = ("NAME", "RESOURCE GROUP", "SKU", "STATE", "LOCATION")
_GROUP_IN_ID = re.compile(r"/resourceGroups/([^/]+)/", re.IGNORECASE)


def resource_group_of(body: dict[str, Any]) -> str:
    """The resource group named in a resource's `id`."""
    found = _GROUP_IN_ID.search(str(body.get("id", "")))
    return found.group(1) if found else NONE


def quota_text(quota: Any) -> str:
    """A collection's quota in words: `10 jobs, every 1 hour at most`."""
    if not isinstance(quota, dict) or not quota:
        return "the plan's"
    parts = []
    if "maxJobCount" in quota:
        parts.append(f"{quota['maxJobCount']} jobs")
    recurrence = quota.get("maxRecurrence")
    if isinstance(recurrence, dict):
        parts.append(f"every {recurrence.get('interval', 1)} {recurrence.get('frequency')} at most")
    if "maxJobOccurrence" in quota:
        parts.append(f"{quota['maxJobOccurrence']} occurrences")
    return ", ".join(parts)


def _row(body: dict[str, Any]) -> list[str]:
    return [
        text(body.get("name")),
        resource_group_of(body),
        text(dig(body, "properties", "sku", "name")),
        paused_state(text(dig(body, "properties", "state")), dig(body, "properties", "pause")),
        text(body.get("location")),
    ]


def notification_pairs(notifications: Any) -> list[tuple[str, str]]:
    """A collection's notifications (Horarium extension), `events → uri` each (`→ slack
    https://…/***`, `→ email a@x, b@y` for the other channels): nothing when it has none."""
    if not isinstance(notifications, list) or not notifications:
        return []
    described = [
        f"{', '.join(map(str, n.get('events') or []))} → {_where(n)}"
        for n in notifications
        if isinstance(n, dict)
    ]
    return [("notifications", "; ".join(described))]


def _where(notification: dict[str, Any]) -> str:
    email = notification.get("email")
    if isinstance(email, dict):
        return "email " + ", ".join(map(str, email.get("to") or []))
    kind = notification.get("format")
    uri = text(notification.get("uri"))
    return f"{kind} {uri}" if isinstance(kind, str) and kind != "horarium" else uri


def _pairs(body: dict[str, Any]) -> list[tuple[str, str]]:
    tags = body.get("tags") or {}
    return [
        ("name", text(body.get("name"))),
        ("resource group", resource_group_of(body)),
        ("location", text(body.get("location"))),
        ("sku", text(dig(body, "properties", "sku", "name"))),
        ("state", text(dig(body, "properties", "state"))),
        *pause_pairs(dig(body, "properties", "pause")),
        *notification_pairs(dig(body, "properties", "notifications")),
        ("quota", quota_text(dig(body, "properties", "quota"))),
        ("tags", ", ".join(f"{k}={v}" for k, v in tags.items()) or NONE),
        ("id", text(body.get("id"))),
    ]


@click.group()
def collections() -> None:
    """Job collections, through the REST API (--url, --token)."""


@collections.command(name="list")
@scope_options()
@json_option
@connection_options
def list_collections(
    connection: Connection, subscription: str, resource_group: str | None, as_json: bool
) -> None:
    """The collections of a subscription (or of one resource group)."""
    with connection.client() as client:
        listing = client.list_collections(subscription, resource_group)
    where = f"the resource group {resource_group}" if resource_group else "the subscription"
    empty = f"No job collections in {where} ({subscription})."
    print_listing(listing, as_json, COLLECTION_HEADERS, _row, empty=empty)


@collections.command()
@collection_options(positional=True)
@click.option(
    "--from", "start", default=None, help="ISO 8601 (without an offset: in --zone); default: now."
)
@click.option(
    "--to", "end", default=None, help="Exclusive; default: 24 hours after --from; at most 7 days."
)
@click.option(
    "--zone",
    default=None,
    callback=read_zone,
    help="IANA zone the times are shown in (default UTC).",
)
@json_option
@connection_options
def upcoming(
    connection: Connection,
    collection: CollectionRef,
    start: str | None,
    end: str | None,
    zone: ZoneInfo,
    as_json: bool,
) -> None:
    """What runs when: every job's executions in a window, by time, with calendar, daylight
    saving, jitter and pause marks (a Horarium extension; one request)."""
    with connection.client() as client:
        answer = client.collection_upcoming(
            collection, instant_param(start, zone), instant_param(end, zone)
        )
    if as_json:
        emit_json(answer)
    else:
        print_timeline(answer, zone, str(collection))


@collections.command()
@collection_options(positional=True)
@json_option
@connection_options
def show(connection: Connection, collection: CollectionRef, as_json: bool) -> None:
    """One collection: location, plan, state, quota, tags."""
    with connection.client() as client:
        body = client.get_collection(collection)
    print_resource(body, as_json, _pairs)


@collections.command()
@collection_options(positional=True)
@click.option(
    "--sku",
    type=click.Choice(SKUS, case_sensitive=False),
    default=None,
    help="The plan (the collection's sku.name).",
)
@click.option("--location", default=None, help="The region, e.g. westus (optional).")
@click.option(
    "--file",
    "file",
    type=click.File("r"),
    default=None,
    help="The collection's JSON, as the API takes it ('-': stdin), instead of --sku/--location.",
)
@json_option
@connection_options
def put(
    connection: Connection,
    collection: CollectionRef,
    sku: str | None,
    location: str | None,
    file: IO[str] | None,
    as_json: bool,
) -> None:
    """Create or replace a collection (PUT: what is not given is dropped)."""
    if file is not None and (sku or location):
        raise OneLineError("give --file, or --sku (and --location), not both")
    body: Any
    if file is not None:
        body = read_document(file, "collection").raw
    elif sku:
        body = {"properties": {"sku": {"name": sku}}}
        if location:
            body["location"] = location
    else:
        raise OneLineError("give --sku NAME (and optionally --location), or --file FILE")
    with connection.client() as client:
        written = client.put_collection(collection, body)
    if as_json:
        emit_json(written.body)
    else:
        state = dig(written.body, "properties", "state")
        plan = dig(written.body, "properties", "sku", "name")
        verb = "Created" if written.created else "Replaced"
        note(f"{verb} the collection {collection} ({plan}, {state}).")


@collections.command()
@collection_options(positional=True)
@yes_option
@connection_options
def delete(connection: Connection, collection: CollectionRef, yes: bool) -> None:
    """Delete a collection with its jobs and their history."""
    confirm_delete(f"the collection {collection}, its jobs and their history", yes)
    with connection.client() as client:
        client.delete_collection(collection)
    note(f"Deleted the collection {collection}, its jobs and their history.")


@collections.command()
@collection_options(positional=True)
@connection_options
def enable(connection: Connection, collection: CollectionRef) -> None:
    """Enable a collection and its Disabled jobs (they are scheduled again)."""
    with connection.client() as client:
        client.enable_collection(collection)
    note(f"Enabled the collection {collection} and its jobs.")


@collections.command()
@collection_options(positional=True)
@connection_options
def disable(connection: Connection, collection: CollectionRef) -> None:
    """Disable a collection and its Enabled jobs."""
    with connection.client() as client:
        client.disable_collection(collection)
    note(f"Disabled the collection {collection} and its jobs.")
