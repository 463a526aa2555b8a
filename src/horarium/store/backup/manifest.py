"""A backup's `manifest.json`: what made it, when, at which migration, and whether the secret key
is in it. The files of a backup folder are named here."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
SQLITE_FILE = "horarium.sqlite3"
PG_DUMP_FILE = "horarium.pgdump"
KEY_FILE = "secret.key"  # the key file as is (mode 0600)
SEALED_KEY_FILE = "secret.key.sealed"  # the key file sealed under a passphrase (`key_copy`)
FORMAT = 1


class BackupError(Exception):
    """A backup or restore that cannot be done; the text says why in one line."""


class KeyCopy(StrEnum):
    """How a backup holds the secret key."""

    NONE = "none"
    PLAIN = "plain"
    SEALED = "sealed"


@dataclass(frozen=True)
class Manifest:
    horarium: str  # the version that made the backup
    database: str  # "sqlite" or "postgresql"
    schema_revision: str  # the database's migration when it was copied
    made_at: str  # ISO 8601, UTC: the copy's moment (SQLite), the check's (PostgreSQL)
    secret_key: KeyCopy
    # Ids of the keys that sealed the stored secrets (the store's seal marks; empty: unknown).
    sealed_with: tuple[str, ...]
    format: int = FORMAT


def write(folder: Path, manifest: Manifest) -> None:
    document = asdict(manifest)
    document["secret_key"] = manifest.secret_key.value
    document["sealed_with"] = list(manifest.sealed_with)
    (folder / MANIFEST).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def read(folder: Path) -> Manifest:
    """The manifest of the backup in `folder`; `BackupError` when there is none or it is not
    one this version reads."""
    path = folder / MANIFEST
    try:
        document: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BackupError(f"{folder} is not a Horarium backup: it has no {MANIFEST}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BackupError(f"{path} cannot be read: {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BackupError(f"{path} is not a manifest of format {FORMAT}")
    try:
        return Manifest(
            horarium=str(document["horarium"]),
            database=str(document["database"]),
            schema_revision=str(document["schema_revision"]),
            made_at=str(document["made_at"]),
            secret_key=KeyCopy(document["secret_key"]),
            sealed_with=tuple(str(kid) for kid in document["sealed_with"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise BackupError(f"{path} is not a complete manifest ({exc})") from None
