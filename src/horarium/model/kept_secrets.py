"""Keeping a job's stored secrets when a PUT or PATCH does not send them again.

GET never returns a secret: passwords, the OAuth secret, the pfx, SAS tokens and keys are left
out; credential headers and the secret parts of a URI come back as `***`. So that GET → edit →
PUT works, a request that leaves such a secret out, or sends back exactly `***`, keeps the stored
one — but only while the part's target (`model.secrets.target_origin`: the scheme, host and port
of `request.uri`, the storage account, the Service Bus namespace) is unchanged, and the
authentication keeps its type. Sent to another target, a stored secret is refused (400 naming
the field): a PATCH of `request.uri` alone must not carry the password to another host.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_plus

from horarium.model import enums
from horarium.model.actions import infer_auth_type
from horarium.model.errors import BadRequest
from horarium.model.keys import lookup
from horarium.model.secrets import MASK, is_credential_name, secrets_in, target_origin, uri_secrets

# The secrets each kind of HTTP authentication holds (a pfx's password goes with its pfx).
_AUTH_SECRETS = {
    "Basic": ("password",),
    "ActiveDirectoryOAuth": ("secret",),
    "ClientCertificate": ("pfx", "password"),
}


class _Keeper:
    """Fills the secrets of one part (the action, or its error action) from the stored part."""

    def __init__(self, path: str, stored: Mapping[str, Any], given: Mapping[str, Any]) -> None:
        self.path = path
        self.old = target_origin(stored)
        self.new = target_origin(given)
        self.kept: list[str] = []

    def take(self, where: str, value: Any) -> Any:
        """The stored `value` for the field at `where` (relative to the part), when it may go."""
        if self.old != self.new:
            raise BadRequest(
                f"{self.path}.{where}: required again, because the target changed from"
                f" {self.old} to {self.new}; a stored secret is only sent to the target it was"
                " given for"
            )
        self.kept.append(f"{self.path}.{where}")
        return value


def keep_stored(
    given: Mapping[str, Any], stored: Mapping[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """`given` (job properties, canonical property names) with the secrets it leaves out or
    masks taken from `stored` (the stored definition, secrets usable), as the module's docstring
    says; also the paths of the secrets kept."""
    out = copy.deepcopy(dict(given))
    action, old = out.get("action"), (stored or {}).get("action")
    if not (isinstance(action, dict) and isinstance(old, Mapping)):
        return out, []
    kept = _keep_part(action, old, "properties.action")
    error, old_error = action.get("errorAction"), old.get("errorAction")
    if isinstance(error, dict) and isinstance(old_error, Mapping):
        kept += _keep_part(error, old_error, "properties.action.errorAction")
    return out, kept


def refuse_masks(definition: Mapping[str, Any]) -> None:
    """400 when a parsed definition still holds `***` for a secret: there was none to keep."""
    masked = [".".join(s.path) for s in secrets_in(definition) if s.value == MASK]
    action = definition.get("action") or {}
    for where, part in ("action", action), ("action.errorAction", action.get("errorAction")):
        uri = ((part or {}).get("request") or {}).get("uri")
        if isinstance(uri, str) and MASK in uri_secrets(uri):
            masked.append(f"{where}.request.uri")
    if masked:
        raise BadRequest(
            f"properties.{masked[0]}: '{MASK}' stands for a stored secret, and there is none to"
            " keep here; send the value itself"
        )


def _keep_part(given: dict[str, Any], stored: Mapping[str, Any], path: str) -> list[str]:
    keeper = _Keeper(path, stored, given)
    if keeper.new is None:
        return []  # no readable target: validation says what is wrong with it
    request, old_request = given.get("request"), stored.get("request")
    if isinstance(request, dict) and isinstance(old_request, Mapping):
        _keep_request(request, old_request, keeper)
    queue, old_queue = given.get("queueMessage"), stored.get("queueMessage")
    if isinstance(queue, dict) and isinstance(old_queue, Mapping):
        if _left_out(queue.get("sasToken")) and old_queue.get("sasToken"):
            queue["sasToken"] = keeper.take("queueMessage.sasToken", old_queue["sasToken"])
    for payload in ("serviceBusQueueMessage", "serviceBusTopicMessage"):
        bus, old_bus = given.get(payload), stored.get(payload)
        if isinstance(bus, dict) and isinstance(old_bus, Mapping):
            auth, old_auth = bus.get("authentication"), old_bus.get("authentication")
            if isinstance(auth, dict) and isinstance(old_auth, Mapping):
                if _left_out(auth.get("sasKey")) and old_auth.get("sasKey"):
                    where = f"{payload}.authentication.sasKey"
                    auth["sasKey"] = keeper.take(where, old_auth["sasKey"])
    return keeper.kept


def _keep_request(request: dict[str, Any], stored: Mapping[str, Any], keeper: _Keeper) -> None:
    auth, old_auth = request.get("authentication"), stored.get("authentication")
    if isinstance(auth, dict) and isinstance(old_auth, Mapping):
        _keep_auth(auth, old_auth, keeper)
    headers, old_headers = request.get("headers"), stored.get("headers")
    if isinstance(headers, dict) and isinstance(old_headers, Mapping):
        for name, value in headers.items():
            old_value = lookup(old_headers, name) if isinstance(name, str) else None
            if value == MASK and is_credential_name(name) and isinstance(old_value, str):
                headers[name] = keeper.take(f"request.headers.{name}", old_value)
    uri, old_uri = request.get("uri"), stored.get("uri")
    if isinstance(uri, str) and isinstance(old_uri, str) and MASK in uri:
        request["uri"] = _keep_uri(uri, old_uri, keeper)


def _keep_auth(auth: dict[str, Any], stored: Mapping[str, Any], keeper: _Keeper) -> None:
    given_type = auth.get("type")
    kind = (
        enums.find(given_type, enums.HTTP_AUTH_TYPES)
        if given_type is not None
        else infer_auth_type(auth)
    )
    if kind is None or kind != stored.get("type"):
        return  # another kind of authentication: the stored secrets do not apply
    for name in _AUTH_SECRETS.get(kind, ()):
        if not _left_out(auth.get(name)):
            break  # a new pfx brings its own password
        if stored.get(name):
            auth[name] = keeper.take(f"request.authentication.{name}", stored[name])


def _keep_uri(uri: str, stored: str, keeper: _Keeper) -> str:
    """`uri` with each `***` secret part (the user information's password, a credential query
    value) taken from the stored URI's same part."""
    head, hash_mark, fragment = uri.partition("#")
    base, question, query = head.partition("?")
    old_head = stored.partition("#")[0]
    old_base, _, old_query = old_head.partition("?")
    scheme, slashes, rest = base.partition("//")
    authority, slash, tail = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    user, colon, password = userinfo.partition(":")
    if slashes and at and colon and password == MASK:
        old_password = _password_of(old_base)
        if old_password:
            password = keeper.take("request.uri", old_password)
            base = f"{scheme}//{user}:{password}@{host}{slash}{tail}"
    if question:
        pairs = query.split("&")
        old_values: dict[str, list[str]] = {}
        for pair in old_query.split("&") if old_query else ():
            name, _, value = pair.partition("=")
            old_values.setdefault(unquote_plus(name).lower(), []).append(value)
        for i, pair in enumerate(pairs):
            name, equals, value = pair.partition("=")
            if not (equals and value == MASK and is_credential_name(unquote_plus(name))):
                continue
            candidates = old_values.get(unquote_plus(name).lower())
            if candidates:
                pairs[i] = f"{name}={keeper.take('request.uri', candidates.pop(0))}"
        base += "?" + "&".join(pairs)
    return base + hash_mark + fragment


def _password_of(base: str) -> str:
    _, slashes, rest = base.partition("//")
    userinfo, at, _ = rest.partition("/")[0].rpartition("@")
    return userinfo.partition(":")[2] if slashes and at else ""


def _left_out(value: Any) -> bool:
    return value is None or value == "" or value == MASK
