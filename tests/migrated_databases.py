"""Databases already at this version's schema, for test servers: a copy of a template migrated
once instead of a migration per server (a server then finds nothing to do and skips loading
Alembic: about half a second of each start, hundreds of starts per run).

The PostgreSQL template is a database named after a digest of the migrations, made once per
machine and copied with `CREATE DATABASE … TEMPLATE` (a file copy on the server); the SQLite
template is a file migrated once per test process. Tests about migrating (tests/upgrade,
tests/test_store_migrations.py, first starts) use empty databases instead."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from contextlib import AbstractContextManager
from functools import cache
from pathlib import Path

from horarium.store.core.db import MIGRATIONS, create_engine, migrate
from tests.support import PG_ADMIN_URL, admin_execute, admin_fetch, fresh_pg_database, run_apart

TEMPLATE_PREFIX = "horarium_template_"


def _migrations_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(MIGRATIONS.rglob("*.py")):
        digest.update(path.relative_to(MIGRATIONS).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


async def _migrate(url: str) -> None:
    engine = create_engine(url)
    try:
        await migrate(engine)
    finally:
        await engine.dispose()


@cache
def postgres_template() -> str:
    """The name of the migrated template database, made when it is missing. It is built under a
    name of its own and renamed when complete, so that another process never copies half of it;
    of two processes that build it at once, the second drops its copy."""
    name = TEMPLATE_PREFIX + _migrations_digest()
    if admin_fetch("SELECT 1 FROM pg_database WHERE datname = $1", name):
        return name
    building = f"horarium_building_{uuid.uuid4().hex[:12]}"
    admin_execute(f'CREATE DATABASE "{building}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        run_apart(lambda: _migrate(f"{base}/{building}"))
        admin_execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    except Exception:
        admin_execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
        if not admin_fetch("SELECT 1 FROM pg_database WHERE datname = $1", name):
            raise
    return name


@cache
def _sqlite_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="horarium-template-"))
    path = folder / "horarium.sqlite3"
    run_apart(lambda: _migrate(f"sqlite:///{path}"))
    for companion in ("-wal", "-shm"):
        assert not path.with_name(path.name + companion).exists(), "the template was not closed"
    return path


def migrated_sqlite_file(path: Path) -> str:
    """A migrated SQLite database at `path` (its folder 0700 and the file 0600, as Horarium
    makes them); returns its URL."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copyfile(_sqlite_template(), path)
    os.chmod(path, 0o600)
    return f"sqlite:///{path}"


def place_sqlite_database(data_dir: Path) -> None:
    """Put a migrated SQLite database where `horarium serve --data-dir data_dir` looks for it."""
    migrated_sqlite_file(data_dir / "horarium.sqlite3")


def migrated_pg_database() -> AbstractContextManager[str]:
    """`fresh_pg_database`, already at this version's schema."""
    return fresh_pg_database(postgres_template())
