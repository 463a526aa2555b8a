"""Whether an error means the database cannot be reached now (an outage: it refuses
connections, a connection dropped, it is shutting down or starting) rather than a mistake in
what was asked. Callers wait and try again after an outage; the API answers 503."""

from __future__ import annotations

import socket

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
)
_NETWORK = (ConnectionError, TimeoutError, socket.gaierror)


def is_outage(exc: BaseException) -> bool:
    """True when `exc` (or what caused it) says the database is unreachable for now."""
    for error in causes(exc):
        if isinstance(error, DBAPIError) and error.connection_invalidated:
            return True
        if isinstance(error, (PoolTimeout, *_NETWORK, *_DRIVER_OUTAGES)):
            return True
    return False


def one_line(exc: BaseException) -> str:
    """The driver's own words for an outage, without a traceback."""
    for error in causes(exc):
        if isinstance(error, (*_NETWORK, *_DRIVER_OUTAGES)):
            return f"{type(error).__name__}: {error}".rstrip(": ")
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
