"""The management API's SQL for job collections."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.names import CollectionName
from horarium.model.notifications import NOTIFICATIONS, event_bits
from horarium.model.pause import PAUSE, until_of
from horarium.store.core.schema import job_collections, jobs
from horarium.store.core.sealing import keyring_of, seal_notifications
from horarium.store.resources.jobs import lock_executions, lock_rows


@dataclass(frozen=True)
class CollectionRecord:
    id: int
    subscription_id: str
    resource_group: str
    name: str
    location: str | None
    state: str
    sku: str
    document: dict[str, Any]

    @property
    def names(self) -> CollectionName:
        return CollectionName(self.subscription_id, self.resource_group, self.name)


_COLUMNS = (
    job_collections.c.id,
    job_collections.c.subscription_id,
    job_collections.c.resource_group,
    job_collections.c.name,
    job_collections.c.location,
    job_collections.c.state,
    job_collections.c.sku,
    job_collections.c.document,
)


def _record(row: Any) -> CollectionRecord:
    return CollectionRecord(
        id=row.id,
        subscription_id=row.subscription_id,
        resource_group=row.resource_group,
        name=row.name,
        location=row.location,
        state=row.state,
        sku=row.sku,
        document=dict(row.document or {}),
    )


async def get(
    conn: AsyncConnection, name: CollectionName, *, lock: bool = False
) -> CollectionRecord | None:
    """The collection, matched case-insensitively; `lock` holds its row (PostgreSQL) so that
    writes to one collection's jobs queue behind each other (quotas stay exact)."""
    query = select(*_COLUMNS).where(job_collections.c.key == name.key)
    if lock and conn.dialect.name != "sqlite":
        query = query.with_for_update()
    row = (await conn.execute(query)).first()
    return _record(row) if row is not None else None


async def list_all(
    conn: AsyncConnection, subscription: str, resource_group: str | None = None
) -> list[CollectionRecord]:
    """A subscription's (or one resource group's) collections, by name."""
    query = select(*_COLUMNS).where(
        func.lower(job_collections.c.subscription_id) == subscription.lower()
    )
    if resource_group is not None:
        query = query.where(func.lower(job_collections.c.resource_group) == resource_group.lower())
    query = query.order_by(job_collections.c.key)
    return [_record(row) for row in await conn.execute(query)]


async def count_in_subscription(conn: AsyncConnection, subscription: str) -> int:
    """How many collections a subscription holds, counted so that a create may rely on it: on
    PostgreSQL it first takes a lock on the subscription held to the end of the transaction, so
    concurrent creates in one subscription count one after the other (SQLite has one writer)."""
    if conn.dialect.name != "sqlite":
        await conn.execute(select(func.pg_advisory_xact_lock(_lock_key(subscription))))
    query = select(func.count()).where(
        func.lower(job_collections.c.subscription_id) == subscription.lower()
    )
    return int((await conn.execute(query)).scalar_one())


def _lock_key(subscription: str) -> int:
    """The PostgreSQL advisory lock key of a subscription (a signed 64-bit number)."""
    digest = hashlib.blake2b(
        f"horarium/subscription/{subscription.lower()}".encode(), digest_size=8
    )
    return int.from_bytes(digest.digest(), "big", signed=True)


async def insert_one(
    conn: AsyncConnection,
    name: CollectionName,
    *,
    location: str | None,
    state: str,
    sku: str,
    document: dict[str, Any],
    now: datetime,
) -> int:
    document = _sealed(conn, document)
    result = await conn.execute(
        insert(job_collections)
        .values(
            key=name.key,
            subscription_id=name.subscription,
            resource_group=name.resource_group,
            name=name.name,
            location=location,
            state=state,
            sku=sku,
            document=document,
            paused_until=until_of(document.get(PAUSE)),
            notify_events=event_bits(document.get(NOTIFICATIONS)),
            created_at=now,
            updated_at=now,
        )
        .returning(job_collections.c.id)
    )
    return int(result.scalar_one())


async def update_one(
    conn: AsyncConnection, collection_id: int, now: datetime, **values: Any
) -> None:
    """Set `location`, `state`, `sku` and/or `document` (its pause sets `paused_until`, its
    notifications `notify_events`; their secrets are sealed here)."""
    if "document" in values:
        document = values["document"] = _sealed(conn, values["document"])
        values["paused_until"] = until_of(document.get(PAUSE))
        values["notify_events"] = event_bits(document.get(NOTIFICATIONS))
    await conn.execute(
        update(job_collections)
        .where(job_collections.c.id == collection_id)
        .values(updated_at=now, **values)
    )


def _sealed(conn: AsyncConnection, document: dict[str, Any]) -> dict[str, Any]:
    """The document as stored: its notifications' secrets sealed (`store.core.sealing`)."""
    notifications = document.get(NOTIFICATIONS)
    if not notifications:
        return document
    return {**document, NOTIFICATIONS: seal_notifications(notifications, keyring_of(conn.engine))}


async def delete_one(conn: AsyncConnection, collection_id: int) -> None:
    """Deletes the collection; its jobs, their history and executions go by cascade (their
    rows locked first in the engine's lock order: `jobs.lock_rows`)."""
    members = select(jobs.c.id).where(jobs.c.collection_id == collection_id)
    job_ids = list((await conn.execute(members)).scalars())
    await lock_rows(conn, job_ids)
    await lock_executions(conn, job_ids)
    await conn.execute(delete(job_collections).where(job_collections.c.id == collection_id))
