"""The engine's side of check-in monitors: monitors whose `due_at` has come (an expected
check-in overdue, its grace over, a run past `maxRuntime`) are judged
(`model.monitor_status.judge`), their status written and their notification put in the outbox in
the same transaction, a batch of them a transaction run in one go on the store's writer
(`store.runs.transact`).

Any process of a cluster may do it, and one decides each change: on PostgreSQL the due rows are
chosen `FOR UPDATE SKIP LOCKED` (a check-in's transaction locks its monitor's row too), and the
update is conditional on the status and `due_at` that were read, so a change is written, and
notified, once — also when a node stops between two passes."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.model.monitor_status import Watch, judge, watch_of
from horarium.model.names import CollectionName
from horarium.store.core import monitor_events
from horarium.store.core.schema import job_collections, monitors
from horarium.store.runs.transact import Transactor

BATCH = 50  # monitors judged per transaction: a few ms of the write lock each

_m = monitors.c


async def next_due(db: AsyncEngine) -> datetime | None:
    """When the earliest monitor is due (an index lookup, no write lock)."""
    async with db.connect() as conn:
        found = (await conn.execute(select(func.min(_m.due_at)))).scalar()
    return found if isinstance(found, datetime) else None


@dataclass(frozen=True)
class Judged:
    """How many monitors one pass looked at, and how many changed status."""

    looked: int = 0
    changed: int = 0


async def judge_due(transactor: Transactor, now: datetime) -> Judged:
    """Judge every Enabled monitor due by `now`, `BATCH` a transaction, each transaction one
    function on the store's writer (`store.runs.transact`: on SQLite one hop per batch)."""
    looked = changed = 0
    while True:
        seen, moved = await transactor.write(
            functools.partial(_judge_batch, now=now), "judging monitors"
        )
        looked += seen
        changed += moved
        if seen < BATCH:
            return Judged(looked, changed)


_DUE = (
    select(
        _m.id,
        _m.collection_id,
        _m.name,
        _m.definition,
        _m.status,
        _m.expected_at,
        _m.started_at,
        _m.last_check_in_at,
        _m.due_at,
        job_collections.c.subscription_id,
        job_collections.c.resource_group,
        job_collections.c.name.label("collection"),
        job_collections.c.notify_events,
    )
    .join(job_collections, job_collections.c.id == _m.collection_id)
    .where(_m.due_at <= bindparam("now"), _m.state == "Enabled")
    .order_by(_m.due_at)
    .limit(BATCH)
)
_DUE_LOCKED = _DUE.with_for_update(skip_locked=True, of=monitors)

# The status written if the monitor is still as it was read (one process decides each change).
_JUDGED = update(monitors).where(
    _m.id == bindparam("monitor_id"),
    _m.status == bindparam("was_status"),
    _m.due_at == bindparam("was_due_at"),
)


def _judge_batch(conn: Connection, now: datetime) -> tuple[int, int]:
    query = _DUE if conn.dialect.name == "sqlite" else _DUE_LOCKED
    rows = conn.execute(query, {"now": now}).all()
    verdicts = [(row, judge(_watch(row), now)) for row in rows]
    writes = [
        {
            "monitor_id": row.id,
            "was_status": row.status,
            "was_due_at": row.due_at,
            "status": verdict.watch.status,
            "due_at": verdict.due_at,
        }
        for row, verdict in verdicts
    ]
    if writes:
        conn.execute(_JUDGED, writes)
    # The rows read are this transaction's (SQLite: its write lock; PostgreSQL: FOR UPDATE), so
    # every conditional update above found its row as read.
    changes = [
        _change(row, verdict.event, verdict.watch.status, verdict.reason)
        for row, verdict in verdicts
        if verdict.event is not None
    ]
    notified = monitor_events.rows_of(changes, now)
    if notified:
        conn.execute(monitor_events.INSERT, notified)
    return len(rows), len(changes)


def _watch(row: Any) -> Watch:
    return watch_of(
        row.definition, status=row.status, expected_at=row.expected_at, started_at=row.started_at
    )


def _change(row: Any, event: str, status: str, reason: str) -> monitor_events.MonitorChange:
    return monitor_events.MonitorChange(
        event=event,
        collection_id=row.collection_id,
        collection=CollectionName(row.subscription_id, row.resource_group, row.collection),
        notify_events=row.notify_events,
        monitor=row.name,
        status=status,
        previous=row.status,
        reason=reason,
        expected_at=row.expected_at,
        last_check_in_at=row.last_check_in_at,
    )
