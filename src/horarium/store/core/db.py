"""Opening the database: URL normalisation, engine creation, migrations at start.

A SQLite database is private to its owner: its folder is created with mode 0700, and the file
(and its -wal, -shm and -journal files, which SQLite creates with the database file's mode) is
0600 whatever the umask."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary, WeakSet

from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy import event, inspect, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from horarium.store.core.revisions import REVISION, head_revision
from horarium.store.core.sealing import Keyring, attach

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS = Path(__file__).with_name("migrations")
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
CONNECT_TIMEOUT = 10.0  # seconds a new PostgreSQL connection may take
# The server's TCP keepalives on a service's connections: a process that vanished with the
# network (no FIN) has its backends, and what they hold, freed after about a minute.
SERVER_KEEPALIVES = {
    "tcp_keepalives_idle": "30",
    "tcp_keepalives_interval": "10",
    "tcp_keepalives_count": "3",
}


def async_url(url: str) -> str:
    """Map the URLs users write (`sqlite:///f`, `postgresql://…`) onto the async drivers."""
    u = make_url(url)
    if u.drivername in ("sqlite", "sqlite+aiosqlite"):
        return str(u.set(drivername="sqlite+aiosqlite"))
    if u.drivername in ("postgresql", "postgres", "postgresql+asyncpg"):
        return str(u.set(drivername="postgresql+asyncpg"))
    raise ValueError(f"database: unsupported URL scheme {u.drivername!r} (sqlite or postgresql)")


# A commit checkpoints the log itself past this many pages (SQLite's default); with
# `background_checkpoints` (serve runs `store.core.checkpoints`, off the write path) only past
# WAL_BACKSTOP_PAGES (~80 MB), a backstop should that task stop.
WAL_AUTOCHECKPOINT_PAGES = 1000
WAL_BACKSTOP_PAGES = 20_000
_checkpointed_elsewhere: WeakSet[AsyncEngine] = WeakSet()


def _sqlite_pragmas(
    dbapi_connection: Any, _record: Any, autocheckpoint: int = WAL_AUTOCHECKPOINT_PAGES
) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def create_engine(
    url: str,
    *,
    keyring: Keyring | None = None,
    timeout: float | None = None,
    background_checkpoints: bool = False,
    **kwargs: Any,
) -> AsyncEngine:
    """An async engine; for SQLite the file is made private (see above) and WAL mode switched
    on. `keyring` seals and opens the secrets of the job definitions (`store.core.sealing`).
    `timeout` (PostgreSQL): seconds a statement may take, waiting on the network included;
    past it the statement is cancelled with `TimeoutError` (an outage, `store.core.outages`).
    None: no limit (migrations, key rotation: work that may rightly take long).
    `background_checkpoints` (SQLite): the caller runs `store.core.checkpoints` on it, and its
    commits checkpoint only as a backstop."""
    full = make_url(async_url(url))
    if full.drivername.startswith("sqlite"):
        if full.database and full.database != ":memory:":
            private_sqlite_file(Path(full.database))
        engine = create_async_engine(full, **kwargs)
        if background_checkpoints:
            _checkpointed_elsewhere.add(engine)
        event.listen(engine.sync_engine, "connect", _pragmas_of(engine))
    else:
        kwargs.setdefault("pool_size", 10)
        kwargs.setdefault("max_overflow", 20)
        # After an outage (a restart, a dropped network) the pooled connections are dead: each
        # is tested when taken (one round trip) and replaced, so the first requests after the
        # database is back succeed. A connection attempt gives up after CONNECT_TIMEOUT.
        kwargs.setdefault("pool_pre_ping", True)
        kwargs.setdefault("connect_args", _connect_args(timeout))
        engine = create_async_engine(full, **kwargs)
    if keyring is not None:
        attach(engine, keyring)
    return engine


def _connect_args(timeout: float | None) -> dict[str, Any]:
    """asyncpg's: connecting gives up after CONNECT_TIMEOUT; with a `timeout`, the client
    cancels a statement that has not answered by then (a silent network: the server cannot
    say anything), the server cancels one that runs longer (it frees what it holds), and the
    server probes an idle connection (`SERVER_KEEPALIVES`)."""
    args: dict[str, Any] = {"timeout": CONNECT_TIMEOUT}
    if timeout is not None and timeout > 0:
        args["command_timeout"] = timeout
        args["server_settings"] = {
            "statement_timeout": str(max(1, round(timeout * 1000))),
            **SERVER_KEEPALIVES,
        }
    return args


def private_sqlite_file(path: Path) -> None:
    """Create the database file (and a missing folder, 0700) readable by its owner only, and
    take away others' access to an existing one and its companion files."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for file in (path, *(path.with_name(path.name + end) for end in SQLITE_COMPANIONS)):
        try:
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)
        except OSError:
            continue  # absent (or not ours: then not ours to change either)


class SchemaError(Exception):
    """The database cannot be brought to this version's schema (Alembic's reason)."""


def _upgrade(connection: Connection) -> bool:
    """Apply the migrations the database lacks, unless it is at this version's head already
    (then Alembic is not even loaded: a process on an up-to-date database starts sooner).
    Returns whether it ran Alembic."""
    if _current_revision(connection) == head_revision():
        return False
    from alembic import command
    from alembic.util.exc import CommandError

    try:
        command.upgrade(alembic_config(connection), "head")
    except CommandError as exc:
        raise SchemaError(str(exc)) from exc
    return True


def alembic_config(connection: Connection | None = None) -> Config:
    """Alembic's configuration of Horarium's migrations, run on `connection` (loads Alembic)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _current_revision(connection: Connection) -> str | None:
    """The migration the database is at (None: not migrated)."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    revision = connection.execute(REVISION).scalar()
    return None if revision is None else str(revision)


# The tables the engine's claims read: PostgreSQL plans those queries on their statistics.
CLAIMED_TABLES = ("jobs", "job_collections", "job_executions")

# Those of them whose statistics are missing (never analyzed) or were taken when the table had
# under nine tenths of its pages (a small table as much as a large one: the plan of a join
# depends on both sides).
_CLAIMED_OIDS = ", ".join(f"'{table}'::regclass" for table in CLAIMED_TABLES)
_UNANALYZED = text(
    "SELECT c.relname FROM pg_class c"
    f" WHERE c.oid IN ({_CLAIMED_OIDS})"
    " AND (c.reltuples < 0"
    " OR pg_relation_size(c.oid) / current_setting('block_size')::int > 1.1 * c.relpages)"
)


async def migrate(engine: AsyncEngine) -> None:
    """Bring the schema to the newest migration (idempotent; safe with several processes on
    PostgreSQL because Alembic's version table is updated in the migration's transaction).

    On PostgreSQL the claimed tables whose statistics are missing or behind their size are then
    analyzed: a database filled while autovacuum was off or had not come round (a restore, a
    bulk load) has none, and the planner then reads every job to claim a few
    (docs/operations.md, "PostgreSQL")."""
    async with engine.begin() as conn:
        postgres = conn.dialect.name == "postgresql"
        if postgres:
            # One migrator at a time when several processes start together.
            await conn.execute(text("SELECT pg_advisory_xact_lock(7212345)"))
        migrated = await conn.run_sync(_upgrade)
        if postgres:
            stale = (await conn.execute(_UNANALYZED)).scalars().all()
            if stale:
                await conn.execute(text(f"ANALYZE {', '.join(stale)}"))
    if migrated and postgres:
        # Statements the pool's connections prepared before may return the types a migration
        # changed (asyncpg then refuses each once): they are replaced by new connections.
        await engine.dispose()


_sqlite_write_locks: WeakKeyDictionary[AsyncEngine, asyncio.Lock] = WeakKeyDictionary()


def sqlite_write_lock(engine: AsyncEngine) -> asyncio.Lock:
    """The process's one lock for writing to this SQLite database (API and engine alike)."""
    lock = _sqlite_write_locks.get(engine)
    if lock is None:
        lock = _sqlite_write_locks[engine] = asyncio.Lock()
    return lock


def sync_sqlite_engine(engine: AsyncEngine) -> Engine:
    """A blocking engine on the same SQLite file, with the same settings (for work done on a
    thread of its own: `horarium.store.runs.transact`)."""
    sync = sa_create_engine(engine.url.set(drivername="sqlite+pysqlite"))
    event.listen(sync, "connect", _pragmas_of(engine))
    return sync


def _pragmas_of(engine: AsyncEngine) -> Callable[[Any, Any], None]:
    """The connect listener of `engine`'s SQLite connections (and of its blocking twin's)."""
    pages = WAL_BACKSTOP_PAGES if engine in _checkpointed_elsewhere else WAL_AUTOCHECKPOINT_PAGES
    return partial(_sqlite_pragmas, autocheckpoint=pages)


@asynccontextmanager
async def write_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """One write transaction, committed on success and rolled back on any error.

    SQLite has a single writer. Taking the write lock up front (`BEGIN IMMEDIATE`) means a
    read-then-write never fails on a stale snapshot; and one in-process lock per database,
    shared by the API and the engine of a process, makes their writers queue in asyncio rather
    than spin on SQLite's busy timeout. PostgreSQL needs neither.
    """
    if engine.dialect.name != "sqlite":
        async with engine.begin() as conn:
            yield conn
        return
    async with sqlite_write_lock(engine), engine.connect() as conn:
        await conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            await conn.rollback()
            raise
        await conn.commit()
