"""Exclusion calendar operations (a Horarium extension), each inside the caller's transaction.

A job that lists calendars (`recurrence.excludeCalendars`) is stored with a copy of their
properties (`resolvedCalendars`, never rendered), so that the engine computes its series from
the definition alone (a check-in monitor too). `resolve` makes that copy when a job or monitor
is written; a calendar write rewrites every job of the collection that lists it (version
bumped, next execution computed again), and every monitor (its expected check-in computed
again), in the same transaction; deleting a calendar that a job or monitor lists is refused
(409).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import evaluation
from horarium.api.collection_ops import require as require_collection
from horarium.api.offload import evaluate
from horarium.model.calendar import check_calendar_name, parse_calendar, render_calendar
from horarium.model.errors import BadRequest, Conflict, NotFound
from horarium.model.keys import lookup
from horarium.model.monitor_status import due_at, watch_of
from horarium.model.names import CollectionName
from horarium.model.schedule import lists_calendars
from horarium.recurrence import RESOLVED, RecurrenceError, exclusion_names
from horarium.store.resources import calendars, monitors, run_requests
from horarium.store.resources.calendars import CalendarRecord
from horarium.store.resources.collections import CollectionRecord

MAX_CALENDARS_PER_COLLECTION = 100


def render(collection: CollectionRecord, calendar: CalendarRecord) -> dict[str, Any]:
    return render_calendar(
        collection.names.arm_id, collection.name, calendar.name, calendar.properties
    )


async def require(conn: AsyncConnection, collection: CollectionRecord, name: str) -> CalendarRecord:
    check_calendar_name(name)
    found = await calendars.get(conn, collection.id, name)
    if found is None:
        raise NotFound(
            f"The Resource 'Microsoft.Scheduler/jobCollections/{collection.name}/calendars/"
            f"{name}' under resource group '{collection.resource_group}' was not found."
        )
    return found


async def put(
    conn: AsyncConnection, name: CollectionName, calendar_name: str, raw: Any, now: datetime
) -> tuple[int, dict[str, Any]]:
    """Create (201) or replace (200) a calendar; the jobs that list it are scheduled again."""
    check_calendar_name(calendar_name)
    properties = await evaluate(_with_ical(raw), parse_calendar, raw, calendar_name)
    collection = await require_collection(conn, name, lock=True)
    existing = await calendars.get(conn, collection.id, calendar_name)
    if existing is None:
        held = len(await calendars.all_of(conn, collection.id))
        if held >= MAX_CALENDARS_PER_COLLECTION:
            raise Conflict(
                f"Job collection '{collection.name}' already holds {held} calendars, the most"
                f" it may hold ({MAX_CALENDARS_PER_COLLECTION}).",
                code="CalendarCountQuotaExceeded",
            )
    await calendars.put(conn, collection.id, calendar_name, properties, now, existing)
    await _reschedule(conn, collection, calendar_name, now)
    stored = await require(conn, collection, calendar_name)
    return (201 if existing is None else 200), render(collection, stored)


async def get(conn: AsyncConnection, name: CollectionName, calendar_name: str) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    return render(collection, await require(conn, collection, calendar_name))


async def list_all(conn: AsyncConnection, name: CollectionName) -> dict[str, Any]:
    collection = await require_collection(conn, name)
    found = await calendars.all_of(conn, collection.id)
    return {"value": [render(collection, c) for c in found], "nextLink": None}


async def delete(conn: AsyncConnection, name: CollectionName, calendar_name: str) -> None:
    """Delete a calendar no job of the collection lists (409 otherwise)."""
    collection = await require_collection(conn, name, lock=True)
    calendar = await require(conn, collection, calendar_name)
    users = [
        j.name
        for j in await calendars.stored_jobs(conn, collection.id)
        if _lists(j.definition, calendar.name)
    ]
    users += [
        f"monitor {m.name}"
        for m in await monitors.all_of(conn, collection.id)
        if _lists(m.definition, calendar.name)
    ]
    if users:
        shown = ", ".join(repr(u) for u in users[:10]) + (" …" if len(users) > 10 else "")
        raise Conflict(
            f"Calendar '{calendar.name}' is listed in recurrence.excludeCalendars of"
            f" {len(users)} job(s) or monitor(s) ({shown}); remove it from them first.",
            code="CalendarInUse",
        )
    await calendars.delete_one(conn, calendar.id)


def _with_ical(raw: Any) -> bool:
    """The body carries an iCalendar document: checking it is the costly part of a calendar."""
    properties = lookup(raw, "properties") if isinstance(raw, dict) else None
    return isinstance(properties, dict) and lookup(properties, "ical") is not None


async def resolve(
    conn: AsyncConnection, collection: CollectionRecord, definition: dict[str, Any]
) -> dict[str, Any]:
    """`definition` carrying the properties of the calendars it lists (400 for a name the
    collection has no calendar of), or without any when it lists none."""
    names = _names(definition)
    out = {k: v for k, v in definition.items() if k != RESOLVED}
    if not names:
        return out
    resolved: dict[str, Any] = {}
    for i, calendar_name in enumerate(names):
        found = await calendars.get(conn, collection.id, calendar_name)
        if found is None:
            raise BadRequest(
                f"properties.recurrence.excludeCalendars[{i}]: {calendar_name!r} is not a"
                f" calendar of job collection '{collection.name}'"
            )
        resolved[found.name] = found.properties
    out[RESOLVED] = resolved
    return out


def _names(definition: dict[str, Any]) -> tuple[str, ...]:
    try:
        return exclusion_names(definition)
    except RecurrenceError as error:
        raise BadRequest(f"properties.{error}") from error


def _lists(definition: dict[str, Any], calendar_name: str) -> bool:
    try:
        names = exclusion_names(definition)
    except RecurrenceError:
        return False
    return calendar_name.lower() in (n.lower() for n in names)


async def _reschedule(
    conn: AsyncConnection, collection: CollectionRecord, calendar_name: str, now: datetime
) -> None:
    """Give every job that lists the calendar its new copy, and its next execution again:
    the first run at or after now (or its due execution, when that is earlier), or, while an
    engine process runs the due one, the first run after that; and every monitor that lists it
    its new copy (`_refresh_monitors`)."""
    users = [
        j
        for j in await calendars.stored_jobs(conn, collection.id)
        if _lists(j.definition, calendar_name)
    ]
    by_key = {c.name.lower(): c for c in await calendars.all_of(conn, collection.id)}
    await _refresh_monitors(conn, collection, calendar_name, by_key, now)
    for job in users:
        definition = _resolved(job.definition, by_key)
        values: dict[str, Any] = {"definition": definition}
        due = job.next_execution_at
        if job.state == "Enabled" and due is not None:
            done = job.next_repeat - 1
            rescheduled = await evaluate(
                lists_calendars(definition),
                evaluation.rescheduled,
                definition,
                job.schedule_set_at,
                due,
                job.leased,
                done,
                now,
            )
            if rescheduled.changes:
                values["next_execution_at"] = rescheduled.next_at
            if rescheduled.ended and not await run_requests.continues_series(
                conn, job.id, job.schedule_set_at
            ):
                values["state"] = "Completed"
        await calendars.rewrite_job(conn, job.id, now, **values)


def _resolved(definition: dict[str, Any], by_key: dict[str, CalendarRecord]) -> dict[str, Any]:
    """`definition` with new copies of the calendars it lists."""
    resolved = {}
    for listed in exclusion_names(definition):
        found = by_key.get(listed.lower())
        if found is not None:
            resolved[found.name] = found.properties
    return {**definition, RESOLVED: resolved}


async def _refresh_monitors(
    conn: AsyncConnection,
    collection: CollectionRecord,
    calendar_name: str,
    by_key: dict[str, CalendarRecord],
    now: datetime,
) -> None:
    """Give every monitor that lists the calendar its new copy; one waiting for a check-in
    still to come expects the first instant at or after now under it."""
    for monitor in await monitors.all_of(conn, collection.id):
        if not _lists(monitor.definition, calendar_name):
            continue
        definition = _resolved(monitor.definition, by_key)
        values: dict[str, Any] = {"definition": definition}
        waiting = monitor.expected_at is not None and monitor.expected_at > now
        if monitor.state == "Enabled" and waiting:
            expected = await evaluate(
                lists_calendars(definition),
                evaluation.expected_from,
                definition,
                monitor.schedule_set_at,
                now,
            )
            watch = watch_of(
                definition,
                status=monitor.status,
                expected_at=expected,
                started_at=monitor.started_at,
            )
            values.update(expected_at=expected, due_at=due_at(watch, now))
        await monitors.update_one(conn, monitor.id, now, **values)
