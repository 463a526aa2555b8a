"""Where a job's (and a collection's) secrets go, as its JSON (a file, or the API's answer) shows
them.

The API never returns a secret: passwords, the OAuth secret, the pfx, SAS tokens and keys are
left out; credential headers and the secret parts of a URI come back as `***` (the service's
rule, `horarium.model.secrets`, is used here too); a collection's notifications come back without
their `secret`. A resource read back therefore lacks them, and a file must carry them again
before the resource can be created from it. (Replacing one that exists does not need them: the
service keeps a stored secret while its target is unchanged.)

Property names are matched case-insensitively, as the API reads them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from horarium.model.secrets import MASK, is_credential_name, mask_uri, uri_secrets

_HTTP_AUTH_SECRETS: dict[str, tuple[tuple[str, bool], ...]] = {
    # authentication type (lower case) -> (secret, required)
    "basic": (("password", True),),
    "activedirectoryoauth": (("secret", True),),
    "clientcertificate": (("pfx", True), ("password", False)),
}
_SERVICE_BUS_MESSAGES = ("serviceBusQueueMessage", "serviceBusTopicMessage")


@dataclass(frozen=True)
class SecretField:
    """One secret of a job: its JSON path (`properties.action.request.authentication.password`),
    whether the job needs it (a certificate's password only exists for some pfx files), and
    whether the JSON carries it (neither left out nor `***`)."""

    path: str
    required: bool
    present: bool


def _key(node: Any, name: str) -> str | None:
    """The key of `node` spelled `name` in any case."""
    if isinstance(node, dict):
        for key in node:
            if isinstance(key, str) and key.lower() == name.lower():
                return key
    return None


def _child(node: Any, name: str) -> Any:
    key = _key(node, name)
    return node[key] if key is not None else None


def _carried(value: Any) -> bool:
    return isinstance(value, str) and value not in ("", MASK)


def _parts(job: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, object) of the job's action and of its error action."""
    action = _child(_child(job, "properties"), "action")
    if isinstance(action, dict):
        yield "properties.action", action
        error = _child(action, "errorAction")
        if isinstance(error, dict):
            yield "properties.action.errorAction", error


def _left_out(job: Any) -> Iterator[tuple[str, dict[str, Any], str, bool]]:
    """(path of the holder, holder, name, required) of each secret the API leaves out."""
    for path, part in _parts(job):
        auth = _child(_child(part, "request"), "authentication")
        if isinstance(auth, dict):
            kind = str(_child(auth, "type") or "").lower()
            for name, required in _HTTP_AUTH_SECRETS.get(kind, ()):
                yield f"{path}.request.authentication", auth, name, required
        queue = _child(part, "queueMessage")
        if isinstance(queue, dict):
            yield f"{path}.queueMessage", queue, "sasToken", True
        for message in _SERVICE_BUS_MESSAGES:
            auth = _child(_child(part, message), "authentication")
            if isinstance(auth, dict):
                yield f"{path}.{message}.authentication", auth, "sasKey", True


def _masked(job: Any) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(path of the holder, holder, key) of each value the API shows masked: credential
    headers, and a request URI with secret parts."""
    for path, part in _parts(job):
        request = _child(part, "request")
        if not isinstance(request, dict):
            continue
        headers = _child(request, "headers")
        if isinstance(headers, dict):
            for name, value in headers.items():
                if isinstance(value, str) and value and is_credential_name(name):
                    yield f"{path}.request.headers", headers, name
        uri_key = _key(request, "uri")
        if uri_key is not None and isinstance(request[uri_key], str):
            if uri_secrets(request[uri_key]):
                yield f"{path}.request", request, uri_key


def secret_fields(job: Any) -> list[SecretField]:
    """The secrets a job (its JSON as the API takes or answers it) takes, carried or not."""
    found = [
        SecretField(f"{path}.{name}", required, _carried(_child(holder, name)))
        for path, holder, name, required in _left_out(job)
    ]
    for path, holder, key in _masked(job):
        value = holder[key]
        carried = MASK not in uri_secrets(value) if key.lower() == "uri" else value != MASK
        found.append(SecretField(f"{path}.{key}", True, carried))
    return found


def as_answered(job: dict[str, Any]) -> dict[str, Any]:
    """A copy of the job's JSON as the API would answer it: the secrets it leaves out left out,
    those it masks masked."""
    shown = copy.deepcopy(job)
    for _, holder, name, _ in _left_out(shown):
        key = _key(holder, name)
        if key is not None:
            del holder[key]
    for _, holder, key in _masked(shown):
        holder[key] = mask_uri(holder[key]) if key.lower() == "uri" else MASK
    return shown


def _notifications(collection: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, object) of each of a collection's notifications."""
    listed = _child(_child(collection, "properties"), "notifications")
    if isinstance(listed, list):
        for i, notification in enumerate(listed):
            if isinstance(notification, dict):
                yield f"properties.notifications[{i}]", notification


def _format(notification: dict[str, Any]) -> str:
    given = _child(notification, "format")
    if isinstance(given, str):
        return given.strip().lower()
    return "email" if _child(notification, "email") is not None else "horarium"


# a notification's format -> the property that holds its secret (`horarium.model.notifications`)
_CHANNEL_SECRETS = {"horarium": "secret", "pagerduty": "routingKey", "slack": "uri", "teams": "uri"}


def _shown_uri(value: Any) -> bool:
    """A slack or teams webhook URL as the API shows it (its origin and /***): not carried."""
    return isinstance(value, str) and value.endswith("/" + MASK)


def collection_secret_fields(collection: Any) -> list[SecretField]:
    """The secrets a collection (its JSON) takes, carried or not: each notification's `secret`
    (format horarium), `routingKey` (pagerduty) or webhook `uri` (slack, teams); an email one
    has none (`***`, or the uri as shown, is not carried: the API takes it as "keep the stored
    one")."""
    out = []
    for path, notification in _notifications(collection):
        name = _CHANNEL_SECRETS.get(_format(notification))
        if name is None:
            continue
        value = _child(notification, name)
        carried = _carried(value) and not (name == "uri" and _shown_uri(value))
        out.append(SecretField(f"{path}.{name}", True, carried))
    return out


def collection_as_answered(collection: dict[str, Any]) -> dict[str, Any]:
    """A copy of the collection's JSON as the API would answer it: the notifications' secrets
    left out (a slack or teams uri shown as its origin and /***)."""
    from horarium.model.notifications import masked_uri

    shown = copy.deepcopy(collection)
    for _, notification in _notifications(shown):
        kind = _format(notification)
        for name in ("secret", "routingKey"):
            key = _key(notification, name)
            if key is not None:
                del notification[key]
        uri = _key(notification, "uri")
        if kind in ("slack", "teams") and uri is not None:
            value = notification[uri]
            if isinstance(value, str) and not _shown_uri(value):
                notification[uri] = masked_uri(value)
    return shown
