"""`horarium restore`: a backup put into an empty database, never over a live one.

Every check comes before anything is written: the backup is whole (manifest, database copy or
dump, the key it lists), made by this version or an older one (its migration is one this version
knows), of the target's kind (SQLite into SQLite, PostgreSQL into PostgreSQL), and the target
holds nothing: no SQLite file with tables (nor a stray `-wal` / `-shm` of one), no Horarium table
in the PostgreSQL database. The key goes where the service will read it, unless a key file is
there already: the same key (or one that holds it) is kept, another one is refused. The
caller holds the SQLite engine lock (`process.engine_lock`) while this runs, so no scheduler
starts on the file meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from horarium.store.backup import key_copy, postgres, sqlite_copy
from horarium.store.backup.manifest import (
    PG_DUMP_FILE,
    SQLITE_FILE,
    BackupError,
    Manifest,
    read,
)
from horarium.store.core.db import SQLITE_COMPANIONS
from horarium.store.core.revisions import known_revisions
from horarium.store.core.sealing import Keyring
from horarium.store.core.secret_keys import SecretKeyError, read_key_file, write_key_file


@dataclass(frozen=True)
class KeyTarget:
    """Where the restored service reads its key: `given`, the key of HORARIUM_SECRET_KEY (then
    no file is written), else the file `path`."""

    path: Path
    given: Keyring | None = None


@dataclass
class Restored:
    manifest: Manifest
    key_written: Path | None = None
    notices: list[str] = field(default_factory=list)
    restore_command: str | None = None  # PostgreSQL: what to run to put the data back


def open_backup(src: Path, kind: str, passphrase: str | None) -> tuple[Manifest, Keyring | None]:
    """The backup's manifest and key, checked against a target of `kind` (sqlite, postgresql)."""
    manifest = read(src)
    if manifest.database != kind:
        raise BackupError(
            f"{src} is a backup of a {_kind_name(manifest.database)} database; restore it into"
            f" {_kind_name(manifest.database)} (--database), not into {_kind_name(kind)}"
        )
    if manifest.schema_revision not in known_revisions():
        raise BackupError(
            f"{src} was made by a newer Horarium ({manifest.horarium}, migration"
            f" {manifest.schema_revision}): restore it with that version or a newer one"
        )
    return manifest, key_copy.read(src, manifest.secret_key, passphrase)


def restore_sqlite(src: Path, target: Path, key: KeyTarget, passphrase: str | None) -> Restored:
    manifest, keyring = open_backup(src, "sqlite", passphrase)
    copy = src / SQLITE_FILE
    held = sqlite_copy.holdings(copy)
    if held is None or held.revision != manifest.schema_revision:
        raise BackupError(f"{copy} is missing or is not the database its manifest describes")
    _target_sqlite_empty(target)
    restored = Restored(manifest)
    _plan_key(restored, keyring, key)
    _write_key(restored, keyring, key)
    sqlite_copy.place(copy, target)
    return restored


async def restore_postgres(src: Path, url: str, key: KeyTarget, passphrase: str | None) -> Restored:
    manifest, keyring = open_backup(src, "postgresql", passphrase)
    archive = src / PG_DUMP_FILE
    if not archive.is_file():
        raise BackupError(
            f"{src} has no {PG_DUMP_FILE}: make it with the pg_dump command `horarium backup`"
            " printed"
        )
    found = await postgres.look(url)
    if found.tables:
        revision = f"migration {found.revision}" if found.revision else "no migration"
        raise BackupError(
            f"the database {postgres.shown_url(url)} already holds Horarium's tables"
            f" ({revision}): restore into an empty database (createdb a new one, or drop this"
            " one first)"
        )
    restored = Restored(manifest, restore_command=postgres.restore_command(url, archive))
    _plan_key(restored, keyring, key)
    _write_key(restored, keyring, key)
    return restored


def _target_sqlite_empty(target: Path) -> None:
    held = sqlite_copy.holdings(target)
    if held is not None:
        what = f"migration {held.revision}" if held.revision else "tables of another program"
        raise BackupError(
            f"the SQLite database {target} is not empty ({what}; {held.collections} collections,"
            f" {held.jobs} jobs): restore into an empty data folder or database, or move this"
            " one away first"
        )
    for end in SQLITE_COMPANIONS:
        stray = target.with_name(target.name + end)
        if stray.exists():
            raise BackupError(
                f"{stray} is left from another database: SQLite would apply it to the restored"
                " one; move it away first"
            )


def _plan_key(restored: Restored, keyring: Keyring | None, key: KeyTarget) -> None:
    """Check the key against the target's; say what the service will lack."""
    needed = restored.manifest.sealed_with
    if keyring is None:
        have = key.given or _existing(key.path)
        where = "HORARIUM_SECRET_KEY" if key.given else str(key.path)
        ids = ", ".join(needed) or "unknown"
        if have is None:
            restored.notices.append(
                f"the backup holds no secret key: give the service the key it was made with"
                f" (key id {ids}) at {key.path} or through HORARIUM_SECRET_KEY, or its stored"
                " secrets cannot be read"
            )
        elif not all(have.holds(kid) for kid in needed):
            restored.notices.append(
                f"the backup holds no secret key, and the key of {where} (id"
                f" {', '.join(have.ids)}) is not the one its secrets were sealed with (id {ids})"
            )
        return
    if key.given is not None:
        if not all(key.given.holds(kid) for kid in keyring.ids):
            restored.notices.append(
                f"the backup's key (id {', '.join(keyring.ids)}) was not written:"
                " HORARIUM_SECRET_KEY gives the service another key"
            )
        return
    existing = _existing(key.path)
    if existing is not None and not all(existing.holds(kid) for kid in keyring.ids):
        raise BackupError(
            f"{key.path} holds another key (id {', '.join(existing.ids)}) than the backup's"
            f" (id {', '.join(keyring.ids)}): move it away, or restore into another data folder"
        )


def _write_key(restored: Restored, keyring: Keyring | None, key: KeyTarget) -> None:
    if keyring is None or key.given is not None or key.path.exists():
        return
    try:
        write_key_file(key.path, list(keyring.keys))
    except OSError as exc:
        raise BackupError(
            f"cannot write the secret key {key.path}: {exc.strerror or exc}"
        ) from None
    restored.key_written = key.path


def _existing(path: Path) -> Keyring | None:
    if not path.exists():
        return None
    try:
        return read_key_file(path)
    except SecretKeyError as exc:
        raise BackupError(str(exc)) from None


def _kind_name(kind: str) -> str:
    return "PostgreSQL" if kind == "postgresql" else "SQLite"
