"""PostgreSQL: Horarium does not copy the database itself; `pg_dump` does (a consistent snapshot
of a live database, in PostgreSQL's custom format), and `pg_restore` puts it back. Horarium
checks that the server answers and what the database holds, and says which commands to run.
Their version must be the server's major version or newer; credentials go as PostgreSQL's own
tools take them (`PGPASSWORD`, `~/.pgpass`): the printed URL never carries the password."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import inspect, text
from sqlalchemy.engine import make_url

from horarium.store.core.db import create_engine
from horarium.store.core.probes import schema_revision
from horarium.store.core.schema import metadata
from horarium.store.core.seal_marks import PREFIX as SEAL_MARK

HORARIUM_TABLES = frozenset({*metadata.tables, "alembic_version"})


@dataclass(frozen=True)
class Look:
    """What a PostgreSQL database holds of Horarium's."""

    tables: frozenset[str]  # Horarium's tables present
    revision: str | None
    sealed_with: tuple[str, ...]


async def look(url: str) -> Look:
    """Connect to the database at `url` and see what it holds (the driver's error when it
    cannot: `store.core.open_errors.explain` says it in one line)."""
    db = create_engine(url, timeout=30)
    try:
        async with db.connect() as conn:
            present = await conn.run_sync(lambda c: set(inspect(c).get_table_names()))
            tables = frozenset(present & HORARIUM_TABLES)
            revision = None
            if "alembic_version" in tables:
                revision = await schema_revision(conn)
            sealed: tuple[str, ...] = ()
            if "engine_marks" in tables:
                names = await conn.execute(
                    text("SELECT name FROM engine_marks WHERE name LIKE :p ORDER BY name"),
                    {"p": SEAL_MARK + "%"},
                )
                sealed = tuple(str(n).removeprefix(SEAL_MARK) for n in names.scalars())
            return Look(tables, revision, sealed)
    finally:
        await db.dispose()


def shown_url(url: str) -> str:
    """The URL as `pg_dump` and `pg_restore` take it: `postgresql://`, without the password
    (they read it from `PGPASSWORD` or `~/.pgpass`)."""
    parsed = make_url(url).set(drivername="postgresql", password=None)
    return parsed.render_as_string(hide_password=False)


def has_password(url: str) -> bool:
    return make_url(url).password is not None


def dump_command(url: str, archive: Path) -> str:
    return shlex.join(
        ["pg_dump", "--format=custom", f"--file={archive}", f"--dbname={shown_url(url)}"]
    )


def restore_command(url: str, archive: Path) -> str:
    return shlex.join(
        [
            "pg_restore",
            "--no-owner",
            "--exit-on-error",
            "--single-transaction",
            f"--dbname={shown_url(url)}",
            str(archive),
        ]
    )
