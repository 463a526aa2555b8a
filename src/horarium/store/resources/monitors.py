"""The management API's SQL for check-in monitors and their check-ins (`schema.monitors`,
`schema.monitor_check_ins`). A monitor's ping token is found by its SHA-256 (a unique index): the
token itself is never stored. The check-in's own transaction locks the monitor's row, so that it
and the engine's periodic look (`store.runs.monitor_checks`) change a status one at a time.

A check-in runs as one blocking function on the store's writer (`api.ping_ops`); its
statements (`by_token_statement`, `CHECK_IN`, `CHECKED_IN`) are built here once and bound per
check-in, by either kind of connection."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, Update, bindparam, delete, func, insert, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.store.core.schema import job_collections, monitor_check_ins, monitors

_m = monitors.c


@dataclass(frozen=True)
class MonitorRecord:
    id: int
    collection_id: int
    name: str
    definition: dict[str, Any]
    state: str
    schedule_set_at: datetime
    status: str
    expected_at: datetime | None
    started_at: datetime | None
    last_check_in_at: datetime | None
    due_at: datetime | None


_COLUMNS = (
    _m.id,
    _m.collection_id,
    _m.name,
    _m.definition,
    _m.state,
    _m.schedule_set_at,
    _m.status,
    _m.expected_at,
    _m.started_at,
    _m.last_check_in_at,
    _m.due_at,
)


def _record(row: Any) -> MonitorRecord:
    return MonitorRecord(
        id=row.id,
        collection_id=row.collection_id,
        name=row.name,
        definition=dict(row.definition),
        state=row.state,
        schedule_set_at=row.schedule_set_at,
        status=row.status,
        expected_at=row.expected_at,
        started_at=row.started_at,
        last_check_in_at=row.last_check_in_at,
        due_at=row.due_at,
    )


async def get(conn: AsyncConnection, collection_id: int, name: str) -> MonitorRecord | None:
    query = select(*_COLUMNS).where(_m.collection_id == collection_id, _m.key == name.lower())
    row = (await conn.execute(query)).first()
    return _record(row) if row is not None else None


async def page(
    conn: AsyncConnection, collection_id: int, *, limit: int, offset: int
) -> list[MonitorRecord]:
    query = (
        select(*_COLUMNS)
        .where(_m.collection_id == collection_id)
        .order_by(_m.key)
        .limit(limit)
        .offset(offset)
    )
    return [_record(row) for row in await conn.execute(query)]


async def all_of(conn: AsyncConnection, collection_id: int) -> list[MonitorRecord]:
    """The collection's monitors, by name (at most as many as its plan allows)."""
    query = select(*_COLUMNS).where(_m.collection_id == collection_id).order_by(_m.key)
    return [_record(row) for row in await conn.execute(query)]


async def count(conn: AsyncConnection, collection_id: int) -> int:
    query = select(func.count()).select_from(monitors).where(_m.collection_id == collection_id)
    return int((await conn.execute(query)).scalar() or 0)


async def insert_one(
    conn: AsyncConnection,
    *,
    collection_id: int,
    name: str,
    token_sha256: str,
    now: datetime,
    **values: Any,
) -> None:
    """`values`: definition, state, schedule_set_at, status, expected_at, started_at, due_at."""
    await conn.execute(
        insert(monitors).values(
            collection_id=collection_id,
            key=name.lower(),
            name=name,
            token_sha256=token_sha256,
            created_at=now,
            updated_at=now,
            **values,
        )
    )


def update_statement(monitor_id: int, now: datetime, **values: Any) -> Update:
    return update(monitors).where(_m.id == monitor_id).values(updated_at=now, **values)


async def update_one(conn: AsyncConnection, monitor_id: int, now: datetime, **values: Any) -> None:
    await conn.execute(update_statement(monitor_id, now, **values))


async def delete_one(conn: AsyncConnection, monitor_id: int) -> None:
    await conn.execute(delete(monitors).where(_m.id == monitor_id))


# -- check-ins ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pinged:
    """The monitor a ping token names, with what its notifications need."""

    monitor: MonitorRecord
    subscription_id: str
    resource_group: str
    collection: str
    notify_events: int


_BY_TOKEN = (
    select(
        *_COLUMNS,
        job_collections.c.subscription_id,
        job_collections.c.resource_group,
        job_collections.c.name.label("collection"),
        job_collections.c.notify_events,
    )
    .join(job_collections, job_collections.c.id == _m.collection_id)
    .where(_m.token_sha256 == bindparam("token_sha256"))
)
_BY_TOKEN_LOCKED = _BY_TOKEN.with_for_update(of=monitors)


def by_token_statement(dialect: str) -> Select[Any]:
    """The monitor whose token has the digest bound as `token_sha256`, with its collection's
    names and notified events; its row locked (PostgreSQL) for the check-in's transaction. One
    index lookup whether or not there is one. Built once: building and keying a statement
    costs more than running it."""
    return _BY_TOKEN if dialect == "sqlite" else _BY_TOKEN_LOCKED


def pinged(row: Row[Any] | None) -> Pinged | None:
    """The `Pinged` of a row `by_token_statement` found (None: no monitor has the token)."""
    if row is None:
        return None
    return Pinged(
        _record(row), row.subscription_id, row.resource_group, row.collection, row.notify_events
    )


async def by_token(conn: AsyncConnection, token_sha256: str) -> Pinged | None:
    """The monitor whose token has this digest (`by_token_statement`)."""
    query = by_token_statement(conn.dialect.name)
    return pinged((await conn.execute(query, {"token_sha256": token_sha256})).first())


# A check-in's insert, bound with monitor_id, kind, exit_code, received_at and body.
CHECK_IN = insert(monitor_check_ins)

# A check-in's update of its monitor, bound with monitor_id, updated_at and the columns it sets.
CHECKED_IN = update(monitors).where(_m.id == bindparam("monitor_id"))


@dataclass(frozen=True)
class CheckInRecord:
    id: int
    kind: str
    exit_code: int | None
    received_at: datetime
    body: str


async def check_ins(
    conn: AsyncConnection, monitor_id: int, *, limit: int, offset: int
) -> list[CheckInRecord]:
    """The monitor's check-ins, newest first."""
    c = monitor_check_ins.c
    query = (
        select(c.id, c.kind, c.exit_code, c.received_at, c.body)
        .where(c.monitor_id == monitor_id)
        .order_by(c.id.desc())
        .limit(limit)
        .offset(offset)
    )
    return [
        CheckInRecord(row.id, row.kind, row.exit_code, row.received_at, row.body)
        for row in await conn.execute(query)
    ]
