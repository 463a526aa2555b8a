"""Why a database could not be opened, in one line for the operator: the mistakes of a first
start (PostgreSQL not running, a database that does not exist, a login refused, a URL of another
kind) rather than a driver's traceback. The URL is shown without its password."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator

import asyncpg
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from horarium.store.core.db import SchemaError, async_url

URL_FORMS = "sqlite:///FILE or postgresql://user@host:port/database"


def check_url(url: str) -> str | None:
    """What is wrong with a `--database` URL before anything connects (None: nothing)."""
    try:
        async_url(url)
    except ArgumentError:
        return f"--database is not a database URL ({URL_FORMS})."
    except ValueError:
        scheme = url.partition(":")[0]
        return f"--database: unsupported URL scheme {scheme!r} ({URL_FORMS})."
    return None


def causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, what caused it, and the driver's error SQLAlchemy wraps (`orig`)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)
        todo += [orig if isinstance(orig, BaseException) else None]
        todo += [current.__cause__, current.__context__]


def explain(exc: BaseException, shown_url: str) -> str | None:
    """One line saying why the database at `shown_url` (password hidden) could not be opened or
    migrated; None when `exc` is not such a failure."""
    url = make_url(shown_url)
    for error in causes(exc):
        said = _postgres(error, url, shown_url) if url.get_backend_name() == "postgresql" else None
        said = said or _sqlite(error, url)
        if said:
            return said
        if isinstance(error, SchemaError):
            return (
                f"the database {shown_url} cannot be brought to this version's schema: {error}"
                " (was it made by a newer Horarium?)"
            )
    return None


def _postgres(error: BaseException, url: URL, shown: str) -> str | None:
    where = f"PostgreSQL at {url.host or 'localhost'}:{url.port or 5432}"
    if isinstance(error, asyncpg.InvalidCatalogNameError):
        create = f"createdb -h {url.host or 'localhost'} -p {url.port or 5432}"
        if url.username:
            create += f" -U {url.username}"
        return (
            f"{where} has no database '{url.database}' (--database {shown}): create it"
            f" ({create} {url.database}) or name another one."
        )
    if isinstance(
        error, asyncpg.InvalidAuthorizationSpecificationError | asyncpg.InvalidPasswordError
    ):
        return f"{where} refused the login: {error} (--database {shown})."
    if isinstance(error, asyncpg.PostgresError):
        return f"{where} refused: {error} (--database {shown})."
    if isinstance(error, ConnectionRefusedError):
        return (
            f"cannot reach {where}: connection refused. Is PostgreSQL running there, and is"
            f" --database {shown} right?"
        )
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the database host '{url.host}' (--database {shown})."
    if isinstance(error, TimeoutError):
        return f"{where} did not answer in time (--database {shown})."
    if isinstance(error, OSError):
        return f"cannot reach {where}: {error.strerror or error} (--database {shown})."
    return None


def _sqlite(error: BaseException, url: URL) -> str | None:
    if url.get_backend_name() != "sqlite":
        return None
    if isinstance(error, sqlite3.Error):
        return f"cannot use the SQLite database {url.database}: {error}."
    if isinstance(error, OSError):
        return (
            f"cannot create or open the SQLite database {url.database}:"
            f" {error.strerror or error} ({error.filename or url.database})."
        )
    return None
