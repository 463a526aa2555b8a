"""Finding the secrets inside an action, so that no history message can carry them.

The secret fields (`password`, `pfx`, `secret`, `sasToken`, `sasKey`, at any depth), a SAS
token's signature, the Basic credentials as they travel, the values of credential headers (and
their credentials without the scheme: `Bearer <token>`), and the secret parts of a URI (see
`horarium.model.secrets`). The bearer tokens the engine obtains for ActiveDirectoryOAuth are not
in the action: the runner adds them (`oauth_credentials`, `TokenCache.recent`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from horarium.actions.redact import sas_parts
from horarium.model.secrets import is_credential_name, uri_secrets

SECRET_FIELDS = frozenset({"password", "pfx", "secret", "sastoken", "saskey"})


def secrets_of(action: Mapping[str, Any]) -> list[str]:
    """Every secret value in the action (any depth), a SAS token's signature, the Basic
    credentials as they travel in the Authorization header (a server may echo it back), the
    values of credential headers and the secret parts of URIs."""
    found: list[str] = []
    _collect(action, found)
    return found


def oauth_credentials(action: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    """(tenant, audience, clientId, secret) of an ActiveDirectoryOAuth action, else None."""
    request = _child(action, "request")
    auth = _child(request, "authentication") if request is not None else None
    if auth is None or str(_field(auth, "type")).lower() != "activedirectoryoauth":
        return None
    values = tuple(_field(auth, k) for k in ("tenant", "audience", "clientId", "secret"))
    if not all(isinstance(v, str) for v in values):
        return None
    tenant, audience, client_id, secret = (str(v) for v in values)
    return tenant, audience, client_id, secret


def _child(obj: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    value = _field(obj, name)
    return value if isinstance(value, dict) else None


def _field(obj: Mapping[str, Any], name: str) -> Any:
    lowered = name.lower()
    return next((v for k, v in obj.items() if str(k).lower() == lowered), None)


def _header_secrets(headers: Mapping[Any, Any], found: list[str]) -> None:
    for name, value in headers.items():
        if isinstance(value, str) and value and is_credential_name(str(name)):
            found.append(value)
            credential = value.partition(" ")[2].strip()
            if credential:
                found.append(credential)


def _collect(obj: Mapping[Any, Any], found: list[str]) -> str | None:
    """Append the secrets under `obj` to `found` in one pass (this runs for every attempt), and
    return `obj`'s own Basic credentials (`user:password` in base64) when it holds both.
    Objects are the `dict`s JSON decoding gives."""
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
            elif lowered == "uri":
                found.extend(uri_secrets(value))
        elif isinstance(value, dict) and str(key).lower() == "headers":
            _header_secrets(value, found)
        elif isinstance(value, dict):
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
