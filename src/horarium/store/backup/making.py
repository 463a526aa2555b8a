"""`horarium backup`: the backup folder made, the database copied (SQLite) or checked and its
`pg_dump` command said (PostgreSQL), the key put in only when asked for, the manifest written
last (a folder without one is not a backup: an interrupted run leaves nothing restorable)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from horarium import __version__
from horarium.store.backup import key_copy, postgres, sqlite_copy
from horarium.store.backup.manifest import (
    PG_DUMP_FILE,
    SQLITE_FILE,
    BackupError,
    KeyCopy,
    Manifest,
    write,
)
from horarium.store.core.sealing import Keyring


@dataclass(frozen=True)
class KeyChoice:
    """What goes into the backup of the secret key: `copy`, the keyring (None with
    `KeyCopy.NONE`), the passphrase that seals it (`KeyCopy.SEALED`)."""

    copy: KeyCopy
    keyring: Keyring | None = None
    passphrase: str | None = None


@dataclass(frozen=True)
class Made:
    manifest: Manifest
    collections: int | None  # None: not counted (PostgreSQL: the dump is still to be made)
    jobs: int | None
    seconds: float
    dump_command: str | None = None  # PostgreSQL: what to run to complete the backup


def new_folder(dest: Path) -> None:
    """The backup folder: created (mode 0700), or an existing empty one; a backup never
    overwrites anything."""
    if dest.exists() and not dest.is_dir():
        raise BackupError(f"{dest} exists and is not a folder: name a new folder for the backup")
    if dest.is_dir() and any(dest.iterdir()):
        raise BackupError(f"{dest} is not empty: name a new (or empty) folder for the backup")
    try:
        dest.mkdir(mode=0o700, parents=True, exist_ok=True)
        dest.chmod(0o700)
    except OSError as exc:
        raise BackupError(f"cannot make the backup folder {dest}: {exc.strerror or exc}") from None


def backup_sqlite(database: Path, dest: Path, key: KeyChoice) -> Made:
    if not database.is_file():
        raise BackupError(f"there is no SQLite database at {database}: nothing to back up")
    new_folder(dest)
    started = time.monotonic()
    made_at = _now()
    sqlite_copy.copy_live(database, dest / SQLITE_FILE)
    held = sqlite_copy.holdings(dest / SQLITE_FILE)
    if held is None or held.revision is None:
        (dest / SQLITE_FILE).unlink()
        raise BackupError(f"{database} is not a Horarium database (no migration ran on it)")
    manifest = Manifest(
        horarium=__version__,
        database="sqlite",
        schema_revision=held.revision,
        made_at=made_at,
        secret_key=key.copy,
        sealed_with=held.sealed_with,
    )
    _finish(dest, manifest, key)
    return Made(manifest, held.collections, held.jobs, time.monotonic() - started)


async def backup_postgres(url: str, dest: Path, key: KeyChoice) -> Made:
    started = time.monotonic()
    found = await postgres.look(url)
    if found.revision is None:
        raise BackupError(
            f"the database {postgres.shown_url(url)} is not a Horarium database (no migration"
            " ran on it)"
        )
    new_folder(dest)
    manifest = Manifest(
        horarium=__version__,
        database="postgresql",
        schema_revision=found.revision,
        made_at=_now(),
        secret_key=key.copy,
        sealed_with=found.sealed_with,
    )
    _finish(dest, manifest, key)
    command = postgres.dump_command(url, dest / PG_DUMP_FILE)
    return Made(manifest, None, None, time.monotonic() - started, command)


def _finish(dest: Path, manifest: Manifest, key: KeyChoice) -> None:
    if key.keyring is not None:
        key_copy.write(dest, key.keyring, key.copy, key.passphrase)
    write(dest, manifest)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
