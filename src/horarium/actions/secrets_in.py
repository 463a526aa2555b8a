"""Finding the secrets inside an action, so that no history message can carry them."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from horarium.actions.redact import sas_parts

SECRET_FIELDS = frozenset({"password", "pfx", "secret", "sastoken", "saskey"})


def secrets_of(action: Mapping[str, Any]) -> list[str]:
    """Every secret value in the action (any depth), a SAS token's signature, and the Basic
    credentials as they travel in the Authorization header (a server may echo it back)."""
    found: list[str] = []
    _collect(action, found)
    return found


def _collect(obj: Mapping[Any, Any], found: list[str]) -> str | None:
    """Append the secrets under `obj` to `found` in one pass (this runs for every attempt), and
    return `obj`'s own Basic credentials (`user:password` in base64) when it holds both."""
    user: Any = None
    password: Any = None
    for key, value in obj.items():
        if isinstance(value, str):
            lowered = str(key).lower()
            if lowered == "username":
                user = value
            elif lowered == "password":
                password = value
            if value and lowered in SECRET_FIELDS:
                found.append(value)
                if lowered == "sastoken":
                    found.extend(sas_parts(value))
        elif isinstance(value, Mapping):
            mark = len(found)
            credentials = _collect(value, found)
            if credentials is not None:
                found.insert(mark, credentials)  # listed before the mapping's own secrets
        else:
            lowered = str(key).lower()
            if lowered == "username":
                user = value
            elif lowered == "password":
                password = value
    if isinstance(user, str) and isinstance(password, str) and password:
        return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return None
