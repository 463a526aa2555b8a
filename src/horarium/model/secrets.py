"""Which values of a job's action are secret, where they are, and their masked form.

Secret, in the action and in its error action: the Basic and client-certificate `password`, the
ActiveDirectoryOAuth `secret`, the `pfx`, a Storage queue's `sasToken`, a Service Bus `sasKey`,
the value of a credential header (`is_credential_name`), and in `request.uri` the password of
its user information and the values of its credential query keys (`code`, `sig`, …). The user
name of a URI is not secret (as Basic's `username`, it is shown).

`secrets_in` lists them in a canonical definition; `masked` is the definition with each one
replaced by its masked form: `***` for a whole value, the URI with only its secret parts masked.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

MASK = "***"

# Header and query-key names whose values are credentials: these, and any name containing one
# of _CREDENTIAL_PARTS or ending in one of _CREDENTIAL_ENDS (case-insensitively).
_CREDENTIAL_NAMES = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "x-functions-key",
        "api-key",
        "x-api-key",
        "ocp-apim-subscription-key",
        "code",
        "sig",
        "key",
    }
)
_CREDENTIAL_PARTS = (
    "authorization",
    "token",
    "secret",
    "password",
    "passwd",
    "signature",
    "apikey",
    "api-key",
    "api_key",
)
_CREDENTIAL_ENDS = ("-key", "_key")

# Where each action type keeps its payload, and the secret fields of the payload (paths below
# it) other than headers and the URI.
_PAYLOADS = (
    "request",
    "queueMessage",
    "serviceBusQueueMessage",
    "serviceBusTopicMessage",
)
_AUTH_SECRETS = ("password", "secret", "pfx")


@dataclass(frozen=True)
class Secret:
    """One secret value of a definition: its path from the definition's root (property names as
    stored), the value, and what stands for it where it is shown."""

    path: tuple[str, ...]
    value: str
    masked: str


def is_credential_name(name: str) -> bool:
    """Whether a header (or URI query key) of this name carries a credential."""
    lowered = name.lower()
    return (
        lowered in _CREDENTIAL_NAMES
        or any(part in lowered for part in _CREDENTIAL_PARTS)
        or lowered.endswith(_CREDENTIAL_ENDS)
    )


def mask_uri(uri: str) -> str:
    """`uri` with the password of its user information and the values of its credential query
    keys replaced by `***`; everything else as written."""
    if "@" not in uri and "?" not in uri:
        return uri  # the common case, without parsing
    head, _, fragment = uri.partition("#")
    base, question, query = head.partition("?")
    base = _mask_userinfo(base)
    if question:
        base += "?" + "&".join(_mask_pair(pair) for pair in query.split("&"))
    return base + ("#" + fragment if fragment else "")


def uri_secrets(uri: str) -> list[str]:
    """The secret parts of `uri` (as written and decoded): its password, with the Basic
    credentials an HTTP client makes of the user information, and credential query values."""
    if "@" not in uri and "?" not in uri:
        return []
    found: list[str] = []
    head = uri.partition("#")[0]
    base, _, query = head.partition("?")
    _, userinfo, _ = _split_authority(base)
    user, _, password = userinfo.partition(":")
    if password:
        basic = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
        found += [password, unquote_plus(password), basic]
    for pair in query.split("&") if query else ():
        name, equals, value = pair.partition("=")
        if equals and value and is_credential_name(unquote_plus(name)):
            found += [value, unquote_plus(value)]
    return found


def target_origin(part: Mapping[str, Any] | None) -> str | None:
    """Where an action (or error action) sends its secrets: `scheme://host:port` of an HTTP
    request's URI, the storage account of a queue message, the namespace of a Service Bus
    message; None when it has no such target (or it cannot be read)."""
    if not isinstance(part, Mapping):
        return None
    request = part.get("request")
    if isinstance(request, Mapping):
        return _uri_origin(request.get("uri"))
    queue = part.get("queueMessage")
    if isinstance(queue, Mapping):
        account = queue.get("storageAccount")
        return f"storage account {account.lower()}" if isinstance(account, str) else None
    for payload in ("serviceBusQueueMessage", "serviceBusTopicMessage"):
        message = part.get(payload)
        if isinstance(message, Mapping):
            namespace = message.get("namespace")
            if isinstance(namespace, str):
                return f"service bus namespace {namespace.lower()}"
            return None
    return None


def secrets_in(definition: Mapping[str, Any]) -> list[Secret]:
    """Every secret of a canonical definition (its `action` and the action's `errorAction`)."""
    found: list[Secret] = []
    action = definition.get("action")
    if isinstance(action, Mapping):
        found += _part_secrets(action, ("action",))
        error = action.get("errorAction")
        if isinstance(error, Mapping):
            found += _part_secrets(error, ("action", "errorAction"))
    return found


def masked(definition: Mapping[str, Any], found: list[Secret] | None = None) -> dict[str, Any]:
    """A copy of the definition with every secret (`found`, default `secrets_in`) masked."""
    out = dict(definition)
    for secret in secrets_in(definition) if found is None else found:
        set_path(out, secret.path, secret.masked)
    return out


def set_path(root: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set `root[path…] = value`, copying each object on the way (the input's own objects are
    never changed)."""
    node = root
    for key in path[:-1]:
        child = dict(node[key])
        node[key] = child
        node = child
    node[path[-1]] = value


def _part_secrets(part: Mapping[str, Any], at: tuple[str, ...]) -> Iterator[Secret]:
    for payload in _PAYLOADS:
        body = part.get(payload)
        if isinstance(body, Mapping):
            yield from _payload_secrets(body, (*at, payload))


def _payload_secrets(body: Mapping[str, Any], at: tuple[str, ...]) -> Iterator[Secret]:
    uri = body.get("uri")
    if isinstance(uri, str):
        shown = mask_uri(uri)
        if shown != uri:
            yield Secret((*at, "uri"), uri, shown)
    headers = body.get("headers")
    if isinstance(headers, Mapping):
        for name, value in headers.items():
            if isinstance(value, str) and value and is_credential_name(name):
                yield Secret((*at, "headers", name), value, MASK)
    auth = body.get("authentication")
    if isinstance(auth, Mapping):
        for name in (*_AUTH_SECRETS, "sasKey"):
            value = auth.get(name)
            if isinstance(value, str) and value:
                yield Secret((*at, "authentication", name), value, MASK)
    token = body.get("sasToken")
    if isinstance(token, str) and token:
        yield Secret((*at, "sasToken"), token, MASK)


def _uri_origin(uri: Any) -> str | None:
    if not isinstance(uri, str):
        return None
    try:
        parts = urlsplit(uri.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not host or scheme not in ("http", "https"):
        return None
    port = port or (443 if scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def _split_authority(base: str) -> tuple[str, str, str]:
    """(`scheme://`, user information, the rest) of the part of a URI before its query."""
    scheme, slashes, rest = base.partition("//")
    if not slashes:
        return "", "", base
    slash = rest.find("/")
    end = slash if slash >= 0 else len(rest)
    authority, tail = rest[:end], rest[end:]
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return scheme + "//", "", rest
    return scheme + "//", userinfo, host + tail


def _mask_userinfo(base: str) -> str:
    prefix, userinfo, rest = _split_authority(base)
    user, colon, password = userinfo.partition(":")
    if not (colon and password):
        return base
    return f"{prefix}{user}:{MASK}@{rest}"


def _mask_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if equals and value and is_credential_name(unquote_plus(name)):
        return f"{name}={MASK}"
    return pair
