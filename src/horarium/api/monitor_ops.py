"""Check-in monitor operations (a Horarium extension), each inside the caller's transaction.

A monitor's expected instants are a job's series: the same validation (`model.schedule`), the
same calendars (`calendar_ops.resolve`) and the same evaluation (`api.evaluation`, in the
offload pool when it lists calendars). Its ping token (`new_token`, 256 bits from `secrets`) is
stored as its SHA-256 only: `pingUrl` is in the answer that made the token — the PUT that
creates the monitor and `regeneratePingUrl` — and nowhere else (`docs/monitors.md`)."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import evaluation
from horarium.api.api_keys import digest
from horarium.api.calendar_ops import resolve as resolve_calendars
from horarium.api.collection_ops import require as require_collection
from horarium.api.offload import evaluate
from horarium.model import quota
from horarium.model.errors import NotFound
from horarium.model.monitor import (
    MonitorStatus,
    MonitorView,
    check_monitor_name,
    parse_monitor,
    render_check_in,
    render_monitor,
)
from horarium.model.monitor_status import due_at, watch_of
from horarium.model.names import CollectionName
from horarium.model.schedule import lists_calendars
from horarium.store.resources import monitors
from horarium.store.resources.collections import CollectionRecord
from horarium.store.resources.monitors import MonitorRecord

PING_PATH = "/ping/"


def new_token() -> str:
    """A ping token: 256 bits from the operating system's CSPRNG, URL-safe."""
    return secrets.token_urlsafe(32)


def ping_url(base: str, token: str) -> str:
    return f"{base.rstrip('/')}{PING_PATH}{token}"


def arm_id(collection: CollectionRecord, name: str) -> str:
    return f"{collection.names.arm_id}/monitors/{name}"


def render(
    collection: CollectionRecord, monitor: MonitorRecord, ping: str | None = None
) -> dict[str, Any]:
    return render_monitor(
        arm_id=arm_id(collection, monitor.name),
        collection=collection.name,
        name=monitor.name,
        definition=monitor.definition,
        view=MonitorView(
            state=monitor.state,
            status=monitor.status,
            last_check_in=monitor.last_check_in_at,
            next_expected=monitor.expected_at,
        ),
        ping_url=ping,
    )


async def require(conn: AsyncConnection, collection: CollectionRecord, name: str) -> MonitorRecord:
    check_monitor_name(name)
    found = await monitors.get(conn, collection.id, name)
    if found is None:
        raise NotFound(
            f"The Resource 'Microsoft.Scheduler/jobCollections/{collection.name}/monitors/"
            f"{name}' under resource group '{collection.resource_group}' was not found."
        )
    return found


async def put(
    conn: AsyncConnection,
    name: CollectionName,
    monitor_name: str,
    raw: Any,
    now: datetime,
    base_url: str,
) -> tuple[int, dict[str, Any]]:
    """Create (201, with `pingUrl`) or replace (200) a monitor. A new schedule, or enabling a
    Disabled monitor, starts it over: `New`, expecting the series' first instant."""
    check_monitor_name(monitor_name)
    wanted = parse_monitor(raw, monitor_name)
    collection = await require_collection(conn, name, lock=True)
    definition = await resolve_calendars(conn, collection, wanted.definition)
    existing = await monitors.get(conn, collection.id, monitor_name)
    limit = quota.limits(collection.sku, collection.document.get("quota"))
    quota.check_recurrence(limit, definition, collection.name, "monitor")
    if existing is None:
        held = await monitors.count(conn, collection.id)
        quota.check_monitor_count(collection.sku, held + 1, collection.name)
    old = existing.definition if existing is not None else {}
    restart = (
        existing is None
        or any(old.get(k) != definition.get(k) for k in ("startTime", "recurrence"))
        or (existing.state == "Disabled" and wanted.state == "Enabled")
    )
    costly = lists_calendars(definition)
    values: dict[str, Any] = {"definition": definition, "state": wanted.state}
    if restart:
        first = await evaluate(costly, evaluation.first_expected, definition, now)
        values.update(
            schedule_set_at=now, status=MonitorStatus.NEW, expected_at=first, started_at=None
        )
    else:
        assert existing is not None
        values.update(
            status=existing.status, expected_at=existing.expected_at, started_at=existing.started_at
        )
    enabled = wanted.state == "Enabled"
    values["due_at"] = due_at(watch_of(definition, **values), now) if enabled else None
    if existing is None:
        token = new_token()
        await monitors.insert_one(
            conn,
            collection_id=collection.id,
            name=monitor_name,
            token_sha256=digest(token),
            now=now,
            **values,
        )
        stored = await require(conn, collection, monitor_name)
        return 201, render(collection, stored, ping_url(base_url, token))
    if not restart:
        values.pop("status")  # the check-ins' and the engine's, unchanged by this write
    await monitors.update_one(conn, existing.id, now, **values)
    return 200, render(collection, await require(conn, collection, monitor_name))


async def get(conn: AsyncConnection, name: CollectionName, monitor_name: str) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    return render(collection, await require(conn, collection, monitor_name))


async def list_page(
    conn: AsyncConnection, name: CollectionName, *, limit: int, offset: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of monitors by name, and whether another page follows."""
    collection = await require_collection(conn, name)
    found = await monitors.page(conn, collection.id, limit=limit + 1, offset=offset)
    return [render(collection, m) for m in found[:limit]], len(found) > limit


async def delete(conn: AsyncConnection, name: CollectionName, monitor_name: str) -> None:
    collection = await require_collection(conn, name, lock=True)
    monitor = await require(conn, collection, monitor_name)
    await monitors.delete_one(conn, monitor.id)


async def regenerate(
    conn: AsyncConnection, name: CollectionName, monitor_name: str, now: datetime, base_url: str
) -> dict[str, Any]:
    """A new ping token; the old one answers 404 from now on."""
    collection = await require_collection(conn, name, lock=True)
    monitor = await require(conn, collection, monitor_name)
    token = new_token()
    await monitors.update_one(conn, monitor.id, now, token_sha256=digest(token))
    return render(collection, monitor, ping_url(base_url, token))


async def check_ins_page(
    conn: AsyncConnection, name: CollectionName, monitor_name: str, *, limit: int, offset: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of the monitor's check-ins, newest first."""
    collection = await require_collection(conn, name)
    monitor = await require(conn, collection, monitor_name)
    found = await monitors.check_ins(conn, monitor.id, limit=limit + 1, offset=offset)
    monitor_id = arm_id(collection, monitor.name)
    value = [
        render_check_in(
            monitor_id,
            f"{collection.name}/{monitor.name}",
            check_in_id=c.id,
            kind=c.kind,
            exit_code=c.exit_code,
            received_at=c.received_at,
            body=c.body,
        )
        for c in found[:limit]
    ]
    return value, len(found) > limit


async def upcoming(
    conn: AsyncConnection, name: CollectionName, monitor_name: str, count: int, now: datetime
) -> dict[str, Any]:
    """The monitor's next expected check-ins, from the one it waits for (or, Disabled, from
    where it would start if enabled now), listed as a job's upcoming runs."""
    collection = await require_collection(conn, name)
    monitor = await require(conn, collection, monitor_name)
    definition = monitor.definition
    start = monitor.expected_at if monitor.state == "Enabled" else None
    if monitor.state != "Enabled":
        start = await evaluate(
            lists_calendars(definition), evaluation.first_expected, definition, now
        )
    schedule_set_at = monitor.schedule_set_at if monitor.state == "Enabled" else now
    return await evaluate(
        lists_calendars(definition),
        evaluation.monitor_listing,
        definition,
        schedule_set_at,
        start,
        count,
    )
