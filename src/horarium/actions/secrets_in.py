"""Finding the secrets inside an action, so that no history message can carry them."""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

from horarium.actions.redact import sas_parts

SECRET_FIELDS = frozenset({"password", "pfx", "secret", "sastoken", "saskey"})


def secrets_of(action: Mapping[str, Any]) -> list[str]:
    """Every secret value in the action (any depth), a SAS token's signature, and the Basic
    credentials as they travel in the Authorization header (a server may echo it back)."""
    found: list[str] = []
    for key, value in _walk(action):
        if key.lower() in SECRET_FIELDS and isinstance(value, str) and value:
            found.append(value)
            if key.lower() == "sastoken":
                found.extend(sas_parts(value))
        if isinstance(value, Mapping):
            fields = {str(k).lower(): v for k, v in value.items()}
            user, password = fields.get("username"), fields.get("password")
            if isinstance(user, str) and isinstance(password, str) and password:
                found.append(base64.b64encode(f"{user}:{password}".encode()).decode("ascii"))
    return found


def _walk(obj: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for key, value in obj.items():
        yield str(key), value
        if isinstance(value, Mapping):
            yield from _walk(value)
