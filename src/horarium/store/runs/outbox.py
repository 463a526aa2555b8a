"""The notification outbox's delivery side (`schema.notifications`, written by
`store.runs.notices`): take due rows under a lease, with the targets each still has to reach
(the collection's notifications that list the row's event, their secrets opened), then settle
them: delivered rows go, the others wait for their next attempt.

Any process of a cluster may deliver: a taken row's `due_at` is moved to the lease's end (on
PostgreSQL the rows are chosen `FOR UPDATE SKIP LOCKED`), so a process that dies leaves its rows
to be taken again once the lease has run out (delivery is at least once)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.elements import BindParameter

from horarium.model.notifications import (
    EMAIL,
    HORARIUM,
    NOTIFICATIONS,
    WEBHOOK_FORMATS,
    format_of,
    origin,
    target_key,
)
from horarium.store.core.db import write_transaction
from horarium.store.core.schema import job_collections, jobs, monitors, notifications
from horarium.store.core.sealing import SealError, keyring_of, open_notification_secret
from horarium.store.core.types import UTCDateTime
from horarium.store.runs.id_lists import in_ids

_n = notifications.c
_KEYS: BindParameter[Any] = bindparam("keys", expanding=True)


@dataclass(frozen=True)
class Target:
    """Where one notification goes: the channel's `format`, the uri (a slack or teams one
    opened from its secret; an email channel's recipients in `to`), and its secret (None: it
    cannot be opened, and `unreadable` says why). `key` names it in the row's `finished`."""

    uri: str
    secret: str | None
    unreadable: str | None = None
    format: str = HORARIUM
    key: str = ""
    to: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        """What a log line may say of it: the uri's origin, or the recipients' domains."""
        if self.format == EMAIL:
            domains = sorted({a.rpartition("@")[2].lower() for a in self.to})
            return "mail to @" + ", @".join(domains)
        return origin(self.uri)


@dataclass
class Pending:
    """A taken notification, with the targets that have not accepted it yet."""

    id: int
    event: str
    body: str
    attempts: int  # deliveries tried before this one
    finished: list[str]  # the targets done with (`Target.key`): accepted, or refused for good
    targets: list[Target] = field(default_factory=list)
    zone: str | None = None  # the job's or monitor's time zone, for the channels that show it


async def next_due(db: AsyncEngine) -> datetime | None:
    """When the earliest notification is due (an index lookup, no write lock)."""
    async with db.connect() as conn:
        found = (await conn.execute(select(func.min(_n.due_at)))).scalar()
    return found if isinstance(found, datetime) else None


async def take(db: AsyncEngine, now: datetime, limit: int, lease: timedelta) -> list[Pending]:
    """Up to `limit` due notifications, leased until `now + lease`; rows left with no target
    (their collection deleted, or no longer notifying the event) are dropped."""
    keyring = keyring_of(db)
    async with write_transaction(db) as conn:
        query = (
            select(_n.id, _n.collection_id, _n.event, _n.body, _n.attempts, _n.finished)
            .where(_n.due_at <= now)
            .order_by(_n.due_at, _n.id)
            .limit(limit)
        )
        if conn.dialect.name != "sqlite":
            query = query.with_for_update(skip_locked=True)
        rows = (await conn.execute(query)).all()
        if not rows:
            return []
        ids = [row.id for row in rows]
        await conn.execute(
            update(notifications).where(in_ids(_n.id)).values(due_at=now + lease),
            {"ids": ids},
        )
        found = await conn.execute(
            select(job_collections.c.id, job_collections.c.document).where(
                in_ids(job_collections.c.id)
            ),
            {"ids": sorted({row.collection_id for row in rows})},
        )
        documents = {row.id: row.document for row in found}
        taken: list[Pending] = []
        gone: list[int] = []
        for row in rows:
            pending = Pending(row.id, row.event, row.body, row.attempts, list(row.finished or []))
            document: dict[str, Any] = documents.get(row.collection_id) or {}
            for notification in document.get(NOTIFICATIONS) or ():
                if row.event not in notification["events"]:
                    continue
                target = _target(notification, keyring)
                if target.key in pending.finished:
                    continue
                pending.targets.append(target)
            if pending.targets:
                taken.append(pending)
            else:
                gone.append(row.id)
        if gone:
            await conn.execute(delete(notifications).where(in_ids(_n.id)), {"ids": gone})
        await _zones(conn, taken, rows)
    return taken


async def _zones(conn: Any, taken: list[Pending], rows: Sequence[Any]) -> None:
    """The time zone of each taken notification's job or monitor (its recurrence's
    `timeZone`), for those with a channel that shows the time in it: two reads a batch."""
    collection_of = {row.id: row.collection_id for row in rows}
    wanted: dict[tuple[str, int, str], list[Pending]] = {}
    for pending in taken:
        if all(t.format == HORARIUM for t in pending.targets):
            continue
        about = json.loads(pending.body)
        kind = "monitor" if "monitor" in about else "job"
        name = str(about.get(kind, "")).lower()
        wanted.setdefault((kind, collection_of[pending.id], name), []).append(pending)
    for kind, table in (("job", jobs), ("monitor", monitors)):
        keys = [(c, n) for k, c, n in wanted if k == kind]
        if not keys:
            continue
        found = await conn.execute(
            select(table.c.collection_id, table.c.key, table.c.definition).where(
                in_ids(table.c.collection_id), table.c.key.in_(_KEYS)
            ),
            {"ids": sorted({c for c, _ in keys}), "keys": sorted({n for _, n in keys})},
        )
        for row in found:
            waiting = wanted.get((kind, row.collection_id, row.key))
            if not waiting:
                continue
            recurrence = (row.definition or {}).get("recurrence") or {}
            zone = recurrence.get("timeZone") if isinstance(recurrence, dict) else None
            for pending in waiting:
                pending.zone = zone if isinstance(zone, str) else None


def _target(notification: dict[str, Any], keyring: Any) -> Target:
    kind = format_of(notification)
    if kind == EMAIL:
        to = tuple(notification["email"]["to"])
        return Target("", None, format=kind, key=target_key(notification, None), to=to)
    uri = str(notification["uri"])
    try:
        secret = open_notification_secret(notification, keyring)
    except SealError as exc:
        why = f"its secret cannot be read by this process: {exc}"
        return Target(uri, None, why, format=kind, key=target_key(notification, None))
    key = target_key(notification, secret)
    if kind in WEBHOOK_FORMATS:
        return Target(secret, secret, format=kind, key=key)
    return Target(uri, secret, format=kind, key=key)


@dataclass(frozen=True)
class Settled:
    """What became of a taken notification: `done` (every target accepted it, or it was given
    up), else tried again at `retry_at` with the targets in `finished` left out."""

    id: int
    done: bool
    attempts: int = 0
    finished: Sequence[str] = ()
    retry_at: datetime | None = None


async def settle(db: AsyncEngine, settled: Sequence[Settled]) -> None:
    """Delete the finished notifications; the others wait for their next attempt."""
    done = sorted(s.id for s in settled if s.done)
    again = [
        {
            "row": s.id,
            "tried": s.attempts,
            "accepted": list(s.finished),
            "retry_at": s.retry_at,
        }
        for s in sorted(settled, key=lambda s: s.id)
        if not s.done
    ]
    async with write_transaction(db) as conn:
        if done:
            await conn.execute(delete(notifications).where(in_ids(_n.id)), {"ids": done})
        if again:
            await conn.execute(
                update(notifications)
                .where(_n.id == bindparam("row"))
                .values(
                    attempts=bindparam("tried"),
                    finished=bindparam("accepted", type_=notifications.c.finished.type),
                    due_at=bindparam("retry_at", type_=UTCDateTime()),
                ),
                again,
            )
