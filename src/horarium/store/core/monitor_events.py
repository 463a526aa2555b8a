"""The outbox rows (`schema.notifications`) of check-in monitors' events — MonitorLate,
MonitorDown, MonitorUp — written in the transaction that changes the monitor's status: by a
check-in (`store.resources.monitors`' callers) or by the engine's periodic look
(`store.runs.monitor_checks`). They are delivered as every other notification
(`store.runs.outbox`): only to a collection's notifications that list the event."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.datetimes import format_instant
from horarium.model.names import CollectionName
from horarium.model.notifications import BITS
from horarium.store.core.schema import notifications


@dataclass(frozen=True)
class MonitorChange:
    """A monitor's status change, as its notification tells it."""

    event: str
    collection_id: int
    collection: CollectionName
    notify_events: int  # the collection's `notify_events` bits
    monitor: str
    status: str
    previous: str
    reason: str
    expected_at: datetime | None
    last_check_in_at: datetime | None


def notifies(change: MonitorChange) -> bool:
    return bool(change.notify_events & BITS[change.event])


def row(change: MonitorChange, at: datetime) -> dict[str, Any]:
    """The outbox row of `change` at `at`."""
    body = {
        "id": str(uuid.uuid4()),
        "event": change.event,
        "time": format_instant(at),
        "subscriptionId": change.collection.subscription,
        "resourceGroup": change.collection.resource_group,
        "jobCollection": change.collection.name,
        "monitor": change.monitor,
        "monitorId": f"{change.collection.arm_id}/monitors/{change.monitor}",
        "status": change.status,
        "previousStatus": change.previous,
        "reason": change.reason,
        "expectedTime": _instant(change.expected_at),
        "lastCheckIn": _instant(change.last_check_in_at),
    }
    return {
        "collection_id": change.collection_id,
        "event": change.event,
        "body": json.dumps(body, separators=(",", ":"), ensure_ascii=False),
        "created_at": at,
        "due_at": at,
        "attempts": 0,
        "finished": None,
    }


def _instant(value: datetime | None) -> str | None:
    return format_instant(value) if value is not None else None


def rows_of(changes: list[MonitorChange], at: datetime) -> list[dict[str, Any]]:
    """The outbox rows of the changes the collection notifies (none: nothing to insert)."""
    return [row(c, at) for c in changes if notifies(c)]


# The insert the rows of `rows_of` go through (executed with them as its parameters).
INSERT = insert(notifications)


async def write(conn: AsyncConnection, changes: list[MonitorChange], at: datetime) -> None:
    """The rows of the changes the collection notifies, in `conn`'s transaction."""
    rows = rows_of(changes, at)
    if rows:
        await conn.execute(INSERT, rows)
