"""The SQL of API keys: each row holds a key's name, the SHA-256 of its token (never the token),
its subscription ("*": every one), role, and when it was made and expires."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, exists, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.store.core.schema import api_keys

# pg_advisory_xact_lock key held while deciding whether the first key must be made.
_FIRST_KEY_LOCK = 7212346


@dataclass(frozen=True)
class ApiKeyRecord:
    name: str
    subscription: str
    role: str
    created_at: datetime
    expires_at: datetime | None


_COLUMNS = (
    api_keys.c.name,
    api_keys.c.subscription,
    api_keys.c.role,
    api_keys.c.created_at,
    api_keys.c.expires_at,
)


def _record(row: Any) -> ApiKeyRecord:
    return ApiKeyRecord(
        name=row.name,
        subscription=row.subscription,
        role=row.role,
        created_at=row.created_at,
        expires_at=row.expires_at,
    )


async def insert_one(conn: AsyncConnection, record: ApiKeyRecord, token_sha256: str) -> None:
    await conn.execute(
        insert(api_keys).values(
            name=record.name,
            token_sha256=token_sha256,
            subscription=record.subscription,
            role=record.role,
            created_at=record.created_at,
            expires_at=record.expires_at,
        )
    )


async def find(conn: AsyncConnection, token_sha256: str) -> ApiKeyRecord | None:
    """The key whose token has this digest."""
    query = select(*_COLUMNS).where(api_keys.c.token_sha256 == token_sha256)
    row = (await conn.execute(query)).first()
    return _record(row) if row is not None else None


async def named(conn: AsyncConnection, name: str) -> bool:
    """Whether a key of this name exists."""
    return bool((await conn.execute(select(exists().where(api_keys.c.name == name)))).scalar())


async def list_all(conn: AsyncConnection) -> list[ApiKeyRecord]:
    """Every key, oldest first."""
    query = select(*_COLUMNS).order_by(api_keys.c.created_at, api_keys.c.name)
    return [_record(row) for row in await conn.execute(query)]


async def delete_one(conn: AsyncConnection, name: str) -> bool:
    """Delete the key of this name; False when there is none."""
    result = await conn.execute(delete(api_keys).where(api_keys.c.name == name))
    return bool(result.rowcount)


async def none_exist(conn: AsyncConnection) -> bool:
    """Whether the table is empty, with the first-key lock held (PostgreSQL) so that processes
    starting together decide one after the other; in a SQLite write transaction (`BEGIN
    IMMEDIATE`) they already do."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text(f"SELECT pg_advisory_xact_lock({_FIRST_KEY_LOCK})"))
    return not (await conn.execute(select(exists().select_from(api_keys)))).scalar()
