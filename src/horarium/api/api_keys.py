"""API keys: the token format, its digest, making a key and finding the caller a token names.

A token is `hrm_` and 43 characters of `secrets.token_urlsafe(32)` (256 random bits); the prefix
tells it apart from a JWT (which starts `eyJ`). The database keeps only its SHA-256: a token
with that much entropy needs no salt or slow hash, and a lookup is one indexed equality."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api.principal import ALL_SUBSCRIPTIONS, AuthenticationError, Principal, Role
from horarium.model.errors import BadRequest
from horarium.model.names import check_subscription
from horarium.store.resources import api_keys as rows
from horarium.store.resources.api_keys import ApiKeyRecord

TOKEN_PREFIX = "hrm_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
NAME_RULE = "1 to 100 letters, digits, '-', '_' and '.', starting with a letter or digit"


class ApiKeyError(ValueError):
    """A key cannot be made or found as asked (the text says why)."""


@dataclass(frozen=True)
class IssuedKey:
    record: ApiKeyRecord
    token: str  # shown once; only its digest is stored


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """The hex SHA-256 of a token, as stored."""
    return hashlib.sha256(token.encode()).hexdigest()


def is_api_key(token: str) -> bool:
    """Whether a bearer token has the form of a Horarium API key (not necessarily a valid one)."""
    return token.startswith(TOKEN_PREFIX)


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ApiKeyError(f"name: {name!r} is not valid ({NAME_RULE})")
    return name


def check_scope(subscription: str) -> str:
    """A key's subscription: '*' (every one) or a subscription id, lower-cased (ARM compares
    subscription ids case-insensitively)."""
    if subscription == ALL_SUBSCRIPTIONS:
        return subscription
    try:
        return check_subscription(subscription).lower()
    except BadRequest as e:
        raise ApiKeyError(f"subscription: {subscription!r} is not '*' nor a subscription id") from e


async def issue(
    conn: AsyncConnection,
    *,
    subscription: str,
    role: Role,
    now: datetime,
    name: str | None = None,
    expires_in: timedelta | None = None,
) -> IssuedKey:
    """Make a key (in the caller's write transaction); its name is generated when not given."""
    chosen = check_name(name) if name is not None else f"key-{secrets.token_hex(4)}"
    if await rows.named(conn, chosen):
        raise ApiKeyError(f"an API key named {chosen!r} exists already")
    record = ApiKeyRecord(
        name=chosen,
        subscription=check_scope(subscription),
        role=role.value,
        created_at=now,
        expires_at=now + expires_in if expires_in is not None else None,
    )
    token = new_token()
    await rows.insert_one(conn, record, digest(token))
    return IssuedKey(record, token)


async def caller(conn: AsyncConnection, token: str, now: datetime) -> Principal:
    """The caller an API key token names; `AuthenticationError` when it is unknown or expired."""
    record = await rows.find(conn, digest(token))
    if record is None:
        raise AuthenticationError(
            "Authentication failed. The bearer token is not a valid API key (unknown or revoked)."
        )
    if record.expires_at is not None and record.expires_at <= now:
        raise AuthenticationError(
            f"Authentication failed. The API key '{record.name}' expired at"
            f" {record.expires_at:%Y-%m-%dT%H:%M:%SZ}."
        )
    return Principal(record.name, frozenset({record.subscription}), Role(record.role))
