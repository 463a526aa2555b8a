"""Job collection operations, each inside the caller's transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api.offload import evaluate
from horarium.api.resuming import resumed_state
from horarium.model import enums, quota
from horarium.model.actions import uses_authentication
from horarium.model.collection import (
    CollectionInput,
    parse_collection,
    render_collection,
    shaped,
    stored_body,
)
from horarium.model.enums import FINAL_JOB_STATES, CollectionState, JobState
from horarium.model.errors import BadRequest, Conflict, NotFound
from horarium.model.merge import merge_patch
from horarium.model.names import CollectionName
from horarium.model.notifications import EMAIL, NOTIFICATIONS, emails, format_of, keep_secrets
from horarium.model.pause import PAUSE, begun
from horarium.model.schedule import lists_calendars, timing
from horarium.store.resources import collections, jobs
from horarium.store.resources.collections import CollectionRecord
from horarium.store.resources.jobs import JobRecord


def not_found(name: CollectionName) -> NotFound:
    return NotFound(
        f"The Resource 'Microsoft.Scheduler/jobCollections/{name.name}' under resource group"
        f" '{name.resource_group}' was not found."
    )


async def require(
    conn: AsyncConnection, name: CollectionName, *, lock: bool = False
) -> CollectionRecord:
    found = await collections.get(conn, name, lock=lock)
    if found is None:
        raise not_found(name)
    return found


def render(record: CollectionRecord) -> dict[str, Any]:
    return render_collection(
        record.names,
        location=record.location,
        sku=record.sku,
        state=record.state,
        document=record.document,
    )


async def put(
    conn: AsyncConnection,
    name: CollectionName,
    raw: Any,
    now: datetime,
    *,
    max_collections: int,
    mail: bool = False,
) -> tuple[int, dict[str, Any]]:
    """Create (201) or replace (200); a subscription holds at most `max_collections`; `mail`:
    the service can send e-mail (`--smtp-url`), which an email notification needs."""
    body = shaped(raw)
    given = body.get("name")
    if isinstance(given, str) and given and given.lower() != name.name.lower():
        raise BadRequest(
            f"name: {given!r} does not match the job collection name in the URL ({name.name!r})"
        )
    wanted = parse_collection(body)
    existing = await collections.get(conn, name, lock=True)
    if existing is None:
        quota.limits(wanted.sku, wanted.quota)
        await _check_room(conn, name.subscription, max_collections)
        document = _with_secrets(wanted, {}, mail)
        if wanted.pause is not None:
            document[PAUSE] = begun(wanted.pause, None, now)
        await collections.insert_one(
            conn,
            name,
            location=wanted.location,
            state=wanted.state,
            sku=wanted.sku,
            document=document,
            now=now,
        )
        created = await require(conn, name)
        return 201, render(created)
    return 200, await _replace(conn, existing, wanted, now, mail)


async def _check_room(conn: AsyncConnection, subscription: str, max_collections: int) -> None:
    """A subscription may not hold more than the service's limit of collections (fair use)."""
    held = await collections.count_in_subscription(conn, subscription)
    if held >= max_collections:
        raise Conflict(
            f"Subscription '{subscription}' already holds {held} job collections; this service"
            f" allows at most {max_collections} per subscription (--max-collections-per-"
            "subscription, HORARIUM_MAX_COLLECTIONS_PER_SUBSCRIPTION). Delete a collection or"
            " ask the operator to raise the limit.",
            code="JobCollectionCountQuotaExceeded",
        )


async def patch(
    conn: AsyncConnection, name: CollectionName, raw: Any, now: datetime, *, mail: bool = False
) -> dict[str, Any]:
    """Merge the body onto the stored collection (`tags`, when given, replace the old ones)."""
    changes = shaped(raw)
    existing = await require(conn, name, lock=True)
    base = stored_body(existing.location, existing.sku, existing.state, existing.document)
    given = changes.get("properties")
    asked: dict[str, Any] = given if isinstance(given, dict) else {}
    if PAUSE not in asked and enums.find(asked.get("state"), enums.COLLECTION_STATES) == "Enabled":
        base["properties"].pop(PAUSE, None)  # enabling a paused collection ends its pause
    merged = merge_patch(base, {k: v for k, v in changes.items() if k != "tags"})
    if "tags" in changes:
        if changes["tags"] is None:
            merged.pop("tags", None)
        else:
            merged["tags"] = changes["tags"]
    return await _replace(conn, existing, parse_collection(merged), now, mail)


async def _replace(
    conn: AsyncConnection,
    existing: CollectionRecord,
    wanted: CollectionInput,
    now: datetime,
    mail: bool,
) -> dict[str, Any]:
    limit = quota.limits(wanted.sku, wanted.quota)
    members = await jobs.all_of(conn, existing.id)
    _check_members(limit, members, existing.name)
    document = _with_secrets(wanted, existing.document, mail)
    if wanted.pause is not None:
        document[PAUSE] = begun(wanted.pause, existing.document.get(PAUSE), now)
    await collections.update_one(
        conn,
        existing.id,
        now,
        location=wanted.location,
        state=wanted.state,
        sku=wanted.sku,
        document=document,
    )
    await _apply_state(conn, members, existing.state, wanted.state, now)
    return render(await require(conn, existing.names))


def _with_secrets(wanted: CollectionInput, stored: dict[str, Any], mail: bool) -> dict[str, Any]:
    """The document to store: the notifications' secrets not sent again kept from `stored`
    (sealed; the store seals the new ones). An email notification needs `mail`."""
    document = wanted.document
    if not mail and emails(wanted.notifications):
        _require_mail(wanted.notifications or [], stored.get(NOTIFICATIONS) or [])
    if wanted.notifications:
        document[NOTIFICATIONS] = keep_secrets(
            wanted.notifications, stored.get(NOTIFICATIONS) or [], "properties.notifications"
        )
    return document


def _require_mail(wanted: list[dict[str, Any]], stored: list[dict[str, Any]]) -> None:
    """Without --smtp-url, no email notification may be added (one already stored, to the same
    recipients, is kept: the collection's other edits go on)."""
    known = {tuple(n["email"]["to"]) for n in stored if format_of(n) == EMAIL}
    for i, notification in enumerate(wanted):
        if format_of(notification) == EMAIL and tuple(notification["email"]["to"]) not in known:
            raise BadRequest(
                f"properties.notifications[{i}].email: this service sends no e-mail: an email"
                " notification needs the operator's --smtp-url (HORARIUM_SMTP_URL)"
            )


def _check_members(limit: quota.Limits, members: list[JobRecord], collection: str) -> None:
    """A collection cannot be given limits its jobs already break."""
    if len(members) > limit.max_jobs:
        raise Conflict(
            f"Job collection '{collection}' has {len(members)} jobs, more than the"
            f" {limit.max_jobs} that {limit.jobs_from} would allow.",
            code="JobCountQuotaExceeded",
        )
    for job in members:
        try:
            quota.check_recurrence(limit, job.definition, collection)
            quota.check_features(limit, uses_authentication(job.definition["action"]))
        except Conflict as e:
            raise Conflict(f"Job '{job.name}': {e.message}", code=e.code) from e


async def set_state(conn: AsyncConnection, name: CollectionName, state: str, now: datetime) -> None:
    """POST …/enable and …/disable: the collection and all of its jobs."""
    existing = await require(conn, name, lock=True)
    members = await jobs.all_of(conn, existing.id)
    values: dict[str, Any] = {"state": state}
    if state == CollectionState.ENABLED and PAUSE in existing.document:
        values["document"] = {k: v for k, v in existing.document.items() if k != PAUSE}
    await collections.update_one(conn, existing.id, now, **values)
    await _apply_state(conn, members, existing.state, state, now)


async def _apply_state(
    conn: AsyncConnection, members: list[JobRecord], old: str, new: str, now: datetime
) -> None:
    """Enabled: every Disabled job is enabled and every Enabled job scheduled again. Disabled:
    every Enabled job is disabled. Suspended: jobs keep their state but are not scheduled."""
    if old == new:
        return
    await jobs.lock_rows(conn, [job.id for job in members])  # in the engine's lock order
    for job in members:
        if job.state in FINAL_JOB_STATES:
            continue
        if new == CollectionState.ENABLED:
            result = await evaluate(
                lists_calendars(job.definition),
                timing,
                job.definition,
                state=JobState.ENABLED,
                schedule_set_at=job.schedule_set_at,
                now=now,
                executions_done=job.next_repeat - 1,
                collection_enabled=True,
                fresh=False,
            )
            values: dict[str, Any] = {"next_execution_at": result.next_execution_at}
            state = await resumed_state(conn, job, result)
            if state != job.state:
                values["state"] = state
            await jobs.update_one(conn, job.id, now, **values)
        elif new == CollectionState.DISABLED and job.state == JobState.ENABLED:
            await jobs.update_one(
                conn, job.id, now, state=JobState.DISABLED, next_execution_at=None
            )
        elif job.next_execution_at is not None:
            await jobs.update_one(conn, job.id, now, next_execution_at=None)


async def get(conn: AsyncConnection, name: CollectionName) -> dict[str, Any]:
    return render(await require(conn, name))


async def list_all(
    conn: AsyncConnection, subscription: str, resource_group: str | None
) -> dict[str, Any]:
    found = await collections.list_all(conn, subscription, resource_group)
    return {"value": [render(c) for c in found], "nextLink": None}


async def delete(conn: AsyncConnection, name: CollectionName) -> None:
    existing = await require(conn, name, lock=True)
    await collections.delete_one(conn, existing.id)
