"""SQLite: a consistent copy of a live database file, and what a database file holds.

The copy is SQLite's online backup API (`sqlite3.Connection.backup`) in one step: it reads the
whole database inside one read transaction, so it is the database as of one commit, while the
service (WAL mode: readers and the writer do not block each other) goes on writing. The copy is
then switched to rollback-journal mode, so that it is one self-contained file (the service
switches it back to WAL when it opens it), and checked (`PRAGMA quick_check`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from horarium.store.backup.manifest import BackupError
from horarium.store.core.seal_marks import PREFIX as SEAL_MARK

_BUSY_MS = 10_000


@dataclass(frozen=True)
class Holdings:
    """What a Horarium SQLite file holds (`revision` None: no migration ran on it)."""

    revision: str | None
    collections: int
    jobs: int
    sealed_with: tuple[str, ...]


@contextmanager
def _opened(path: Path, *, write: bool = False) -> Iterator[sqlite3.Connection]:
    """An existing database file, never created here (`mode=ro` / `mode=rw`)."""
    mode = "rw" if write else "ro"
    with closing(sqlite3.connect(f"file:{path}?mode={mode}", uri=True)) as connection:
        connection.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
        yield connection


def copy_live(source: Path, dest: Path) -> None:
    """Copy the database `source` (which may be in use) into the new file `dest` (mode 0600)."""
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        with _opened(source, write=True) as live, closing(sqlite3.connect(dest)) as copy:
            live.backup(copy)  # one step: one read transaction, one commit's state
            copy.execute("PRAGMA journal_mode=DELETE")
            checked = copy.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.Error as exc:
        dest.unlink(missing_ok=True)
        raise BackupError(f"cannot copy the SQLite database {source}: {exc}") from None
    if checked != "ok":
        raise BackupError(f"the copy {dest} of {source} fails SQLite's check: {checked}")


def holdings(path: Path) -> Holdings | None:
    """What the database file at `path` holds; None when it holds nothing (missing, empty, or
    no tables). `BackupError` when it is not a SQLite database."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        with _opened(path) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if not tables:
                return None
            return Holdings(
                revision=_scalar(db, "SELECT version_num FROM alembic_version", tables),
                collections=int(_scalar(db, "SELECT count(*) FROM job_collections", tables) or 0),
                jobs=int(_scalar(db, "SELECT count(*) FROM jobs", tables) or 0),
                sealed_with=_sealed_with(db, tables),
            )
    except sqlite3.Error as exc:
        raise BackupError(f"cannot read the SQLite database {path}: {exc}") from None


def _scalar(db: sqlite3.Connection, sql: str, tables: set[str]) -> str | None:
    table = sql.rsplit(" ", 1)[1]
    if table not in tables:
        return None
    row = db.execute(sql).fetchone()
    return None if row is None else str(row[0])


def _sealed_with(db: sqlite3.Connection, tables: set[str]) -> tuple[str, ...]:
    if "engine_marks" not in tables:
        return ()
    rows = db.execute(
        "SELECT name FROM engine_marks WHERE name LIKE ? ORDER BY name", (SEAL_MARK + "%",)
    )
    return tuple(name.removeprefix(SEAL_MARK) for (name,) in rows)


def place(copy: Path, target: Path) -> None:
    """Put the backup's database file `copy` at `target` (absent or empty), whole or not at all:
    written beside it (mode 0600), then renamed over it."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = target.with_name(target.name + ".restoring")
    staging.unlink(missing_ok=True)
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, copy.open("rb") as source:
            while chunk := source.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(staging, target)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
