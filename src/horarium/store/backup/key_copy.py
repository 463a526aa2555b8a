"""The secret key in a backup, only when asked for: the key file as is (`secret.key`, mode
0600), or sealed under a passphrase (`secret.key.sealed`): scrypt (n=2^15, r=8, p=1; 32 MiB,
about 0.1 s) derives a 256-bit key from the passphrase and a random salt, and AES-256-GCM seals
the key file's text with it. The sealed file is JSON, so it says what it is:

    {"sealed": "horarium secret key", "kdf": "scrypt", "n": 32768, "r": 8, "p": 1,
     "salt": "<base64>", "nonce": "<base64>", "data": "<base64>"}
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from horarium.store.backup.manifest import KEY_FILE, SEALED_KEY_FILE, BackupError, KeyCopy
from horarium.store.core.sealing import Keyring
from horarium.store.core.secret_keys import SecretKeyError, encode, parse_keys, write_key_file

_KIND = "horarium secret key"
_AAD = b"horarium backup secret key v1\0"
_N, _R, _P = 2**15, 8, 1


def write(folder: Path, keyring: Keyring, copy: KeyCopy, passphrase: str | None) -> None:
    """Put `keyring` into the backup `folder` as `copy` says (nothing for `KeyCopy.NONE`)."""
    if copy is KeyCopy.PLAIN:
        write_key_file(folder / KEY_FILE, list(keyring.keys))
    elif copy is KeyCopy.SEALED:
        if not passphrase:
            raise BackupError("sealing the secret key needs a passphrase")
        _write_private(folder / SEALED_KEY_FILE, json.dumps(_seal(keyring, passphrase)) + "\n")


def read(folder: Path, copy: KeyCopy, passphrase: str | None) -> Keyring | None:
    """The keyring a backup holds (None: it holds none)."""
    if copy is KeyCopy.NONE:
        return None
    if copy is KeyCopy.PLAIN:
        return _parsed(_text(folder / KEY_FILE), folder / KEY_FILE)
    if not passphrase:
        raise BackupError(
            f"the secret key in {folder} is sealed: give its passphrase (--passphrase-file or"
            " HORARIUM_BACKUP_PASSPHRASE)"
        )
    path = folder / SEALED_KEY_FILE
    try:
        sealed: Any = json.loads(_text(path))
    except ValueError:
        raise BackupError(f"{path} is not a sealed key (not JSON)") from None
    return _parsed(_open(sealed, passphrase, path), path)


def _seal(keyring: Keyring, passphrase: str) -> dict[str, Any]:
    salt, nonce = os.urandom(16), os.urandom(12)
    text = "".join(encode(key) + "\n" for key in keyring.keys).encode("ascii")
    data = AESGCM(_derive(passphrase, salt)).encrypt(nonce, text, _AAD)
    return {
        "sealed": _KIND,
        "kdf": "scrypt",
        "n": _N,
        "r": _R,
        "p": _P,
        "salt": _b64(salt),
        "nonce": _b64(nonce),
        "data": _b64(data),
    }


def _open(sealed: Any, passphrase: str, path: Path) -> str:
    if not isinstance(sealed, dict) or sealed.get("sealed") != _KIND:
        raise BackupError(f"{path} is not a sealed Horarium key")
    try:
        salt, nonce, data = (base64.b64decode(sealed[k], validate=True) for k in _PARTS)
        if (sealed["kdf"], sealed["n"], sealed["r"], sealed["p"]) != ("scrypt", _N, _R, _P):
            raise ValueError("unknown key derivation")
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise BackupError(f"{path} is not a sealed Horarium key ({exc})") from None
    try:
        return AESGCM(_derive(passphrase, salt)).decrypt(nonce, data, _AAD).decode("ascii")
    except InvalidTag:
        raise BackupError(f"the passphrase does not open {path}") from None


_PARTS = ("salt", "nonce", "data")


def _derive(passphrase: str, salt: bytes) -> bytes:
    return Scrypt(salt=salt, length=32, n=_N, r=_R, p=_P).derive(passphrase.encode("utf-8"))


def _parsed(text: str, path: Path) -> Keyring:
    try:
        return parse_keys(text, str(path))
    except SecretKeyError as exc:
        raise BackupError(str(exc)) from None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise BackupError(
            f"the backup's manifest lists a secret key, but {path} is missing"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BackupError(f"{path} cannot be read: {exc}") from None


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(text)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
