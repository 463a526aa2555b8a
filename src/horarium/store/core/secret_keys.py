"""The secret key that seals stored secrets: where it comes from, its file, creating it.

A key is 32 random bytes, written as base64. A key file holds one key a line, newest first
(blank lines and lines starting with `#` are skipped): the first seals, every one opens. The
key itself may be given instead (`HORARIUM_SECRET_KEY`, several separated by commas, newest
first); it wins over the file. Without either, `<data-dir>/secret.key` is used, and created
(mode 0600) when it does not exist.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from horarium.store.core.sealing import KEY_BYTES, Keyring

DEFAULT_FILE = "secret.key"


class SecretKeyError(Exception):
    """The key cannot be had (malformed, missing, unreadable); one line saying which and why."""


@dataclass(frozen=True)
class LoadedKey:
    keyring: Keyring
    source: str  # where it came from, for messages
    created: bool = False  # the default key file was made now
    warning: str | None = None  # e.g. a key file other users can read


def new_key() -> bytes:
    return os.urandom(KEY_BYTES)


def encode(key: bytes) -> str:
    return base64.b64encode(key).decode("ascii")


def parse_keys(text: str, source: str) -> Keyring:
    """The keys of a key file's text (or of the comma-separated variable), newest first."""
    keys: list[bytes] = []
    for number, line in enumerate(text.replace(",", "\n").splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        try:
            key = base64.b64decode(entry, validate=True)
        except (binascii.Error, ValueError):
            key = b""
        if len(key) != KEY_BYTES:
            raise SecretKeyError(
                f"{source}: entry {number} is not a key (the base64 of {KEY_BYTES} random"
                " bytes, e.g. from `openssl rand -base64 32`)"
            )
        keys.append(key)
    if not keys:
        raise SecretKeyError(f"{source}: holds no key")
    return Keyring(keys)


def read_key_file(path: Path) -> Keyring:
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError as exc:
        raise SecretKeyError(f"secret key file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not ASCII text"
        raise SecretKeyError(f"secret key file {path} cannot be read: {reason}") from exc
    return parse_keys(text, f"secret key file {path}")


def write_key_file(path: Path, keys: list[bytes]) -> None:
    """A new key file (mode 0600, whatever the umask); refuses to replace an existing one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write("".join(encode(key) + "\n" for key in keys))


def key_file_path(key_file: Path | None, data_dir: Path) -> Path:
    """The key file a process reads: `key_file`, else the default file in `data_dir`."""
    return key_file if key_file is not None else data_dir / DEFAULT_FILE


def read_existing(*, key: str | None, key_file: Path | None, data_dir: Path) -> Keyring:
    """The keyring `load` would give, without creating the default file. Raises
    `SecretKeyError`."""
    if key:
        return parse_keys(key, "HORARIUM_SECRET_KEY")
    return read_key_file(key_file_path(key_file, data_dir))


def load(*, key: str | None, key_file: Path | None, data_dir: Path) -> LoadedKey:
    """The keyring of a process: `key` (the variable), else `key_file`, else the default file in
    `data_dir`, created when missing. Raises `SecretKeyError`."""
    if key:
        return LoadedKey(parse_keys(key, "HORARIUM_SECRET_KEY"), "HORARIUM_SECRET_KEY")
    created = False
    if key_file is None:
        key_file = key_file_path(None, data_dir)
        if not key_file.exists():
            try:
                write_key_file(key_file, [new_key()])
                created = True
            except FileExistsError:
                pass  # another process, starting at the same time, made it
    keyring = read_key_file(key_file)
    return LoadedKey(keyring, str(key_file), created, _loose_mode(key_file))


def _loose_mode(path: Path) -> str | None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return (
            f"secret key file {path} can be read by other users (mode {mode:04o});"
            f" `chmod 600 {path}`"
        )
    return None
