"""Secrets at rest: a job definition is stored with its secrets masked and sealed (AES-256-GCM).

`seal_definition` turns a definition into its stored form: every secret (see
`horarium.model.secrets`) masked in place, and all of them together, with their paths, encrypted
under the keyring's first key into one `sealed` property: `{"key": <key id>, "data": <base64 of
nonce and ciphertext>}`. The target origins of the action and its error action are the
associated data, so sealed secrets that are moved to another job, or whose job is pointed at
another host in the database, no longer open. `unseal_definition` is the inverse; a definition
without secrets is stored as it is, and read back without any decryption.

The store does both, in one place each: `store.resources.jobs` for the API, `store.runs` for the
engine, with the keyring attached to the database engine at start (`attach`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any
from weakref import WeakKeyDictionary

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.model.notifications import origin
from horarium.model.secrets import masked, secrets_in, set_path, target_origin

SEALED = "sealed"  # the stored definition's property holding its sealed secrets
KEY_BYTES = 32
_NONCE_BYTES = 12
_AAD_PREFIX = b"horarium job secrets v1\0"
_NOTIFICATION_AAD = b"horarium notification secret v1\0"


class SealError(Exception):
    """Sealed secrets that cannot be opened (unknown key, altered data); the text says which."""


def key_id(key: bytes) -> str:
    """A key's public name: 12 hex digits of a hash of it (says which key sealed what)."""
    return hashlib.sha256(b"horarium secret key id\0" + key).hexdigest()[:12]


class Keyring:
    """Secret keys, newest first: the first seals, every one opens what it sealed."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("a keyring needs at least one key")
        unique: dict[str, AESGCM] = {}
        for key in keys:
            if len(key) != KEY_BYTES:
                raise ValueError(f"a secret key is {KEY_BYTES} bytes ({len(key)} given)")
            unique.setdefault(key_id(key), AESGCM(key))
        self._ciphers = unique
        self.keys = tuple(keys)
        self.ids = tuple(unique)

    @classmethod
    def generate(cls) -> Keyring:
        return cls([os.urandom(KEY_BYTES)])

    @property
    def sealing_id(self) -> str:
        return self.ids[0]

    def holds(self, kid: str) -> bool:
        return kid in self._ciphers

    def seal(self, data: bytes, aad: bytes) -> dict[str, str]:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._ciphers[self.sealing_id].encrypt(nonce, data, aad)
        return {"key": self.sealing_id, "data": base64.b64encode(nonce + sealed).decode("ascii")}

    def open(self, sealed: Mapping[str, Any], aad: bytes) -> bytes:
        kid = sealed.get("key")
        cipher = self._ciphers.get(kid) if isinstance(kid, str) else None
        if cipher is None:
            raise SealError(
                f"its secrets were sealed with key id {kid}, which this process's secret key"
                f" (id {', '.join(self.ids)}) does not hold"
            )
        try:
            raw = base64.b64decode(str(sealed.get("data", "")), validate=True)
            return cipher.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], aad)
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise SealError(
                f"its sealed secrets (key id {kid}) do not open: they were altered, or its target"
                " was changed in the database"
            ) from exc


def sealed_key_id(stored: Mapping[str, Any]) -> str | None:
    """The id of the key that sealed a stored definition's secrets; None when it has none."""
    sealed = stored.get(SEALED)
    return str(sealed.get("key")) if isinstance(sealed, Mapping) else None


def holds_clear_secrets(stored: Mapping[str, Any]) -> bool:
    """Whether a stored definition has secrets in clear (written before they were sealed)."""
    return SEALED not in stored and bool(secrets_in(stored))


def seal_definition(definition: Mapping[str, Any], keyring: Keyring | None) -> dict[str, Any]:
    """The stored form of a definition whose secrets are usable (see the module's docstring)."""
    found = secrets_in(definition)
    if not found:
        return dict(definition)
    if keyring is None:
        raise SealError("no secret key is attached to this database; secrets cannot be stored")
    clear = masked(definition, found)
    plain = json.dumps([[list(s.path), s.value] for s in found], separators=(",", ":"))
    clear[SEALED] = keyring.seal(plain.encode(), _associated(clear))
    return clear


def unseal_definition(stored: Mapping[str, Any], keyring: Keyring | None) -> dict[str, Any]:
    """The definition with its secrets usable; raises `SealError` when they cannot be opened."""
    sealed = stored.get(SEALED)
    out = dict(stored)
    if sealed is None:
        return out
    del out[SEALED]
    if keyring is None:
        raise SealError("no secret key is attached to this database; its secrets cannot be read")
    if not isinstance(sealed, Mapping):
        raise SealError("its sealed secrets are not in the stored form")
    for path, value in json.loads(keyring.open(sealed, _associated(out))):
        set_path(out, tuple(path), value)
    return out


def without_secrets(stored: Mapping[str, Any]) -> dict[str, Any]:
    """A stored definition as shown when its secrets cannot be opened: masked, nothing sealed."""
    return {k: v for k, v in stored.items() if k != SEALED}


def _associated(clear: Mapping[str, Any]) -> bytes:
    """What sealed secrets are bound to: the target origins of the action and error action."""
    action = clear.get("action")
    error = action.get("errorAction") if isinstance(action, Mapping) else None
    origins = [target_origin(action), target_origin(error)]
    return _AAD_PREFIX + json.dumps(origins).encode()


# -- a collection's notification secrets (model.notifications) ----------------------------------


def seal_notifications(
    notifications: Sequence[Mapping[str, Any]], keyring: Keyring | None
) -> list[dict[str, Any]]:
    """Notifications as stored: each secret given in clear sealed, bound to the origin of its
    uri (a sealed one, kept from the stored notification, stays as it is; an email channel has
    none)."""
    out: list[dict[str, Any]] = []
    for notification in notifications:
        if "secret" not in notification:
            out.append(dict(notification))
            continue
        secret = notification.get("secret")
        if isinstance(secret, str):
            if keyring is None:
                raise SealError(
                    "no secret key is attached to this database; secrets cannot be stored"
                )
            aad = _NOTIFICATION_AAD + origin(str(notification["uri"])).encode()
            secret = keyring.seal(secret.encode(), aad)
        out.append({**notification, "secret": secret})
    return out


def open_notification_secret(notification: Mapping[str, Any], keyring: Keyring | None) -> str:
    """The secret of a stored notification; raises `SealError` when it cannot be opened."""
    sealed = notification.get("secret")
    if keyring is None:
        raise SealError("no secret key is attached to this database; its secrets cannot be read")
    if not isinstance(sealed, Mapping):
        raise SealError("its sealed secret is not in the stored form")
    aad = _NOTIFICATION_AAD + origin(str(notification.get("uri", ""))).encode()
    return keyring.open(sealed, aad).decode()


# -- the keyring of a database engine ------------------------------------------------------------

_keyrings: WeakKeyDictionary[Engine, Keyring] = WeakKeyDictionary()


def attach(engine: AsyncEngine, keyring: Keyring) -> None:
    """Seal and unseal the definitions stored through `engine` with `keyring`."""
    _keyrings[engine.sync_engine] = keyring


def keyring_of(engine: AsyncEngine) -> Keyring | None:
    """The keyring attached to `engine`, if any."""
    return _keyrings.get(engine.sync_engine)
