"""Whether an error means the database cannot be reached now (an outage: it refuses
connections, a connection dropped, it is shutting down or starting) rather than a mistake in
what was asked. Callers wait and try again after an outage; the API answers 503."""

from __future__ import annotations

import socket
import sqlite3

import asyncpg
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from horarium.store.core.open_errors import causes

_DRIVER_OUTAGES = (
    asyncpg.PostgresConnectionError,  # the connection failed or was lost mid-operation
    asyncpg.CannotConnectNowError,  # starting up, or in recovery
    asyncpg.AdminShutdownError,  # shutting down
    asyncpg.CrashShutdownError,
    asyncpg.QueryCanceledError,  # ran past statement_timeout (--database-timeout): too slow now
    asyncpg.TooManyConnectionsError,  # no connection to give now (max_connections, a limit)
)
_NETWORK = (ConnectionError, TimeoutError, socket.gaierror)
# SQLite's primary result codes for a database that cannot be written now: its disk is full,
# the file or its folder is read-only, or writing it failed.
_SQLITE_CANNOT_WRITE = {
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_CANTOPEN,
}


def is_outage(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the database is unreachable, or cannot be
    written, for now."""
    for error in causes(exc):
        if isinstance(error, DBAPIError) and error.connection_invalidated:
            return True
        if isinstance(error, (PoolTimeout, *_NETWORK, *_DRIVER_OUTAGES)):
            return True
    return cannot_write(exc)


def cannot_write(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the database cannot store anything now: a
    full disk, a read-only file (SQLite), a full disk (PostgreSQL)."""
    for error in causes(exc):
        if isinstance(error, asyncpg.DiskFullError):
            return True
        code = getattr(error, "sqlite_errorcode", None)
        if isinstance(error, sqlite3.Error) and code is not None:
            if code & 0xFF in _SQLITE_CANNOT_WRITE:
                return True
    return False


def failing(exc: BaseException) -> str:
    """What an outage stops, for a log line: "written" (`cannot_write`) or "reached"."""
    return "written" if cannot_write(exc) else "reached"


def one_line(exc: BaseException) -> str:
    """The driver's own words for an outage, without a traceback."""
    for error in causes(exc):
        if isinstance(error, (*_NETWORK, *_DRIVER_OUTAGES, sqlite3.Error, asyncpg.DiskFullError)):
            return f"{type(error).__name__}: {error}".rstrip(": ")
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
