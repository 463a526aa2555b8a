"""A job's `action` (and its `errorAction`): validation into canonical form, and the wire view.

Canonical form, as the store hands it to the API and the engine (it stores the secrets sealed:
`horarium.store.core.sealing`) and the action runners read it: property names and enum values
spelled as in the 2016-03-01 spec, durations as .NET TimeSpan text, secrets included. The wire view
leaves the secret fields out (passwords, the OAuth secret, the pfx, SAS tokens and keys), masks
the values of credential headers and the secret parts of the URI as `***`
(`horarium.model.secrets`), and uses the live service's casing.

Extensions: `retryPolicy.retryType` Exponential with `maxRetryInterval`, and `templated` on the
action (its placeholders: `horarium.model.templates`; the flag covers the error action too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from horarium.model import datetimes, enums, templates
from horarium.model.certificates import read_pfx
from horarium.model.durations import format_iso, format_timespan, parse_duration
from horarium.model.errors import BadRequest
from horarium.model.fields import boolean, integer, obj, optional_obj, string_map, text
from horarium.model.keys import MapOf, Shape
from horarium.model.secrets import MASK, is_credential_name, mask_uri

MAX_URI = 2048
MAX_BODY = 8192
MAX_HEADERS = 50
MAX_HEADER_CHARS = 4096
# The retry policy's limits and, when absent, the live service's defaults (Fixed, 30 s, 4).
MIN_RETRY_INTERVAL = timedelta(seconds=15)
MAX_RETRY_INTERVAL = timedelta(days=548)  # 18 months
MAX_RETRY_COUNT = 20
DEFAULT_RETRY_INTERVAL = timedelta(seconds=30)
DEFAULT_RETRY_COUNT = 4
DEFAULT_MAX_RETRY_INTERVAL = timedelta(days=1)  # Exponential without maxRetryInterval

_AUTH_SHAPE: dict[str, Shape] = dict.fromkeys(
    (
        "type",
        "username",
        "password",
        "pfx",
        "certificateThumbprint",
        "certificateExpiration",
        "certificateExpirationDate",
        "certificateSubjectName",
        "secret",
        "tenant",
        "audience",
        "clientId",
    )
)
_REQUEST_SHAPE: dict[str, Shape] = {
    "uri": None,
    "method": None,
    "headers": MapOf(None),
    "body": None,
    "authentication": _AUTH_SHAPE,
}
_QUEUE_SHAPE: dict[str, Shape] = dict.fromkeys(
    ("storageAccount", "queueName", "sasToken", "message")
)
_BROKERED_STRINGS = (
    "contentType",
    "correlationId",
    "label",
    "messageId",
    "partitionKey",
    "replyTo",
    "replyToSessionId",
    "sessionId",
    "to",
    "viaPartitionKey",
)
_BROKERED_SHAPE: dict[str, Shape] = dict.fromkeys(
    (*_BROKERED_STRINGS, "forcePersistence", "scheduledEnqueueTimeUtc", "timeToLive")
)
_SERVICE_BUS_SHAPE: dict[str, Shape] = {
    "authentication": dict.fromkeys(("sasKey", "sasKeyName", "type")),
    "brokeredMessageProperties": _BROKERED_SHAPE,
    "customMessageProperties": MapOf(None),
    "message": None,
    "namespace": None,
    "transportType": None,
    "queueName": None,
    "topicPath": None,
}
_RETRY_SHAPE: dict[str, Shape] = dict.fromkeys(
    ("retryType", "retryInterval", "retryCount", "maxRetryInterval")
)
ERROR_ACTION_SHAPE: dict[str, Shape] = {
    "type": None,
    "templated": None,
    "request": _REQUEST_SHAPE,
    "queueMessage": _QUEUE_SHAPE,
    "serviceBusQueueMessage": _SERVICE_BUS_SHAPE,
    "serviceBusTopicMessage": _SERVICE_BUS_SHAPE,
    "retryPolicy": _RETRY_SHAPE,
}
ACTION_SHAPE: dict[str, Shape] = {**ERROR_ACTION_SHAPE, "errorAction": ERROR_ACTION_SHAPE}

# Which payload property goes with which action type.
PAYLOAD = {
    "Http": "request",
    "Https": "request",
    "StorageQueue": "queueMessage",
    "ServiceBusQueue": "serviceBusQueueMessage",
    "ServiceBusTopic": "serviceBusTopicMessage",
}

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_STORAGE_ACCOUNT = re.compile(r"[a-z0-9]{3,24}")
_STORAGE_QUEUE = re.compile(r"(?=.{3,63}\Z)[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]")
_NAMESPACE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?")
_ENTITY_PATH = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._/-]{0,258}[A-Za-z0-9])?")
# C0 controls other than horizontal tab, and DEL: never in a header value.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# Headers that frame the request or concern one connection: the client sets them, a job may not.
_FRAMING_HEADERS = frozenset(
    "transfer-encoding content-length connection keep-alive te trailer upgrade host".split()
)
FRAMING_RULE = (
    "a job may not set hop-by-hop or framing headers (Transfer-Encoding, Content-Length,"
    " Connection, Keep-Alive, TE, Trailer, Upgrade, Proxy-*, Host): the service frames each"
    " request itself"
)


def is_framing_header(name: str) -> bool:
    """Whether a job may not set the header `name` (any case): see FRAMING_RULE."""
    lowered = name.lower()
    return lowered in _FRAMING_HEADERS or lowered.startswith("proxy-")


@dataclass(frozen=True)
class WireStyle:
    """How durations go out: TimeSpan (the live service) or ISO 8601 (for azure-mgmt-scheduler
    7.x, which cannot read TimeSpans); `described`: a job's answer carries Horarium's
    `scheduleDescription` (asked with `$expand=scheduleDescription`)."""

    iso_durations: bool = False
    described: bool = False

    def duration(self, stored: str) -> str:
        value = parse_duration(stored, "duration")
        return format_iso(value) if self.iso_durations else format_timespan(value)


# ---------------------------------------------------------------------------------------------
# Input


def parse_action(raw: Any, path: str, *, error_action: bool = False) -> dict[str, Any]:
    """Validate an action object (key-canonicalized) into canonical form."""
    action = obj(raw, path)
    if action.get("type") is None:
        raise BadRequest(f"{path}.type: required (one of {', '.join(enums.ACTION_TYPES)})")
    kind = enums.parse(action["type"], enums.ACTION_TYPES, f"{path}.type")
    out: dict[str, Any] = {"type": kind}
    payload = PAYLOAD[kind]
    where = f"{path}.{payload}"
    if kind in ("Http", "Https"):
        out[payload] = _parse_request(action.get(payload), where)
    elif kind == "StorageQueue":
        out[payload] = _parse_storage_queue(action.get(payload), where)
    else:
        out[payload] = _parse_service_bus(action.get(payload), where, kind)
    retry = optional_obj(action, "retryPolicy", path)
    if retry is not None:
        out["retryPolicy"] = _parse_retry(retry, f"{path}.retryPolicy")
    if "errorAction" in action:
        if error_action:
            raise BadRequest(f"{path}.errorAction: an error action cannot have an error action")
        if action["errorAction"] is not None:
            out["errorAction"] = parse_action(
                action["errorAction"], f"{path}.errorAction", error_action=True
            )
    if action.get("templated") is not None and error_action:
        raise BadRequest(f"{path}.templated: set it on the action; it covers the error action too")
    if boolean(action, "templated", path):
        _check_placeholders(out, path)
        out["templated"] = True
    return out


def _templated_texts(action: dict[str, Any], path: str) -> list[tuple[str, str]]:
    """The fields of a canonical action (and its error action) that templates fill, with their
    paths: the request's uri, body and header values, and queue messages."""
    found: list[tuple[str, str]] = []
    request = action.get("request")
    if request is not None:
        for name in ("uri", "body"):
            if name in request:
                found.append((f"{path}.request.{name}", request[name]))
        for name, value in (request.get("headers") or {}).items():
            found.append((f"{path}.request.headers.{name}", value))
    for payload in ("queueMessage", "serviceBusQueueMessage", "serviceBusTopicMessage"):
        if payload in action:
            found.append((f"{path}.{payload}.message", action[payload]["message"]))
    if action.get("errorAction") is not None:
        found += _templated_texts(action["errorAction"], f"{path}.errorAction")
    return found


def _check_placeholders(action: dict[str, Any], path: str) -> None:
    for where, value in _templated_texts(action, path):
        unknown = templates.unknown_placeholder(value)
        if unknown is not None:
            raise BadRequest(
                f"{where}: unknown placeholder {unknown}; a templated action may use"
                f" {templates.KNOWN}"
            )


def _parse_request(raw: Any, path: str) -> dict[str, Any]:
    if raw is None:
        raise BadRequest(f"{path}: required for Http and Https actions")
    request = obj(raw, path)
    uri = text(request, "uri", path, required=True, max_len=MAX_URI)
    assert uri is not None
    try:
        parts = urlsplit(uri)
        host = parts.hostname
        _port = parts.port
    except ValueError as e:
        raise BadRequest(f"{path}.uri: {uri!r} is not a valid URI ({e})") from e
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise BadRequest(f"{path}.uri: must be an absolute http:// or https:// URI")
    method = text(request, "method", path, required=True, max_len=32)
    assert method is not None
    if not _TOKEN.fullmatch(method):
        raise BadRequest(f"{path}.method: {method!r} is not an HTTP method name")
    out: dict[str, Any] = {"uri": uri, "method": method}
    headers = string_map(request, "headers", path)
    if headers is not None:
        _check_headers(headers, f"{path}.headers")
        out["headers"] = headers
    body = text(request, "body", path, max_len=MAX_BODY)
    if body is not None:
        out["body"] = body
    auth = request.get("authentication")
    if auth is not None:
        out["authentication"] = _parse_http_auth(auth, f"{path}.authentication")
    return out


def _check_headers(headers: dict[str, str], path: str) -> None:
    if len(headers) > MAX_HEADERS:
        raise BadRequest(f"{path}: at most {MAX_HEADERS} headers ({len(headers)} given)")
    total = 0
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name):
            raise BadRequest(f"{path}: {name!r} is not a valid header name")
        if is_framing_header(name):
            raise BadRequest(f"{path}.{name}: {FRAMING_RULE}")
        control = _CONTROL_CHARS.search(value)
        if control is not None:
            raise BadRequest(
                f"{path}.{name}: contains the control character U+{ord(control.group()):04X};"
                " a header value may not hold control characters other than tab"
            )
        total += len(name) + len(value)
    if total > MAX_HEADER_CHARS:
        raise BadRequest(
            f"{path}: names and values may total at most {MAX_HEADER_CHARS} characters"
            f" ({total} given)"
        )


def infer_auth_type(auth: dict[str, Any]) -> str | None:
    """2016-01-01 clients send no discriminator: tell the kind from the fields given."""
    if auth.get("pfx") is not None:
        return "ClientCertificate"
    if auth.get("username") is not None:
        return "Basic"
    if any(auth.get(k) is not None for k in ("tenant", "secret", "clientId", "audience")):
        return "ActiveDirectoryOAuth"
    return None


def _parse_http_auth(raw: Any, path: str) -> dict[str, Any]:
    auth = obj(raw, path)
    given = auth.get("type")
    kind = (
        enums.parse(given, enums.HTTP_AUTH_TYPES, f"{path}.type")
        if given is not None
        else infer_auth_type(auth)
    )
    if kind is None:
        raise BadRequest(f"{path}.type: required (one of {', '.join(enums.HTTP_AUTH_TYPES)})")
    if kind == "NotSpecified":
        return {"type": kind}
    if kind == "Basic":
        username, password = auth.get("username"), auth.get("password")
        if not (isinstance(username, str) and username and isinstance(password, str) and password):
            raise BadRequest(
                "'Username' and 'Password' are required for 'Basic' type of Authentication."
                f" ({path}.username, {path}.password)"
            )
        return {"type": kind, "username": username, "password": password}
    if kind == "ActiveDirectoryOAuth":
        values = {}
        for name in ("tenant", "audience", "clientId", "secret"):
            value = auth.get(name)
            if not (isinstance(value, str) and value.strip()):
                raise BadRequest(
                    "'Tenant', 'Audience', 'ClientId' and 'Secret' are required for"
                    f" 'ActiveDirectoryOAuth' type of Authentication. ({path}.{name}: required)"
                )
            values[name] = value
        return {"type": kind, **values}
    pfx = text(auth, "pfx", path)
    if not pfx:
        raise BadRequest(
            f"'Pfx' is required for 'ClientCertificate' type of Authentication. ({path}.pfx)"
        )
    password = text(auth, "password", path)
    facts = read_pfx(pfx, password, path)
    out: dict[str, Any] = {"type": kind, "pfx": pfx}
    if password is not None:
        out["password"] = password
    out["certificateThumbprint"] = facts.thumbprint
    out["certificateExpiration"] = datetimes.format_instant(facts.expiration)
    out["certificateSubjectName"] = facts.subject_name
    return out


def _live_required(field: str, job_kind: str, path: str, rule: str) -> BadRequest:
    """The live service's wording, plus the field's path and the rule."""
    return BadRequest(
        f"A valid value for {field} required for {job_kind} action job. ({path}: {rule})"
    )


def _parse_storage_queue(raw: Any, path: str) -> dict[str, Any]:
    kind = "Storage Queue"
    if raw is None:
        raise _live_required("QueueMessage", kind, path, "required for StorageQueue actions")
    message = obj(raw, path)
    account = message.get("storageAccount")
    if not (isinstance(account, str) and _STORAGE_ACCOUNT.fullmatch(account)):
        raise _live_required(
            "StorageAccount", kind, f"{path}.storageAccount", "3 to 24 lowercase letters and digits"
        )
    queue = message.get("queueName")
    if not (isinstance(queue, str) and _STORAGE_QUEUE.fullmatch(queue)):
        raise _live_required(
            "QueueName",
            kind,
            f"{path}.queueName",
            "3 to 63 lowercase letters, digits and single dashes, starting and ending with a"
            " letter or digit",
        )
    sas = message.get("sasToken")
    if not (isinstance(sas, str) and sas.strip()):
        raise _live_required("SasToken", kind, f"{path}.sasToken", "a non-empty string")
    body = message.get("message")
    if not isinstance(body, str):
        raise _live_required("Message", kind, f"{path}.message", "a string")
    return {"storageAccount": account, "queueName": queue, "sasToken": sas, "message": body}


def _parse_service_bus(raw: Any, path: str, action_type: str) -> dict[str, Any]:
    topic = action_type == "ServiceBusTopic"
    kind = "ServiceBus Topic" if topic else "ServiceBus Queue"
    if raw is None:
        payload = "ServiceBusTopicMessage" if topic else "ServiceBusQueueMessage"
        raise _live_required(payload, kind, path, f"required for {action_type} actions")
    message = obj(raw, path)
    namespace = message.get("namespace")
    if not (isinstance(namespace, str) and _NAMESPACE.fullmatch(namespace)):
        raise _live_required(
            "Namespace", kind, f"{path}.namespace", "letters, digits and dashes, at most 50"
        )
    entity_key = "topicPath" if topic else "queueName"
    entity = message.get(entity_key)
    if not (isinstance(entity, str) and _ENTITY_PATH.fullmatch(entity)):
        raise _live_required(
            "TopicPath" if topic else "QueueName",
            kind,
            f"{path}.{entity_key}",
            "letters, digits, '.', '-', '_' and '/', starting and ending with a letter or digit,"
            " at most 260",
        )
    out: dict[str, Any] = {"namespace": namespace, entity_key: entity}
    auth = message.get("authentication")
    if not isinstance(auth, dict):
        raise _live_required(
            "Authentication", kind, f"{path}.authentication", "an object {type, sasKeyName, sasKey}"
        )
    auth_type = enums.find(auth.get("type"), enums.SERVICE_BUS_AUTH_TYPES)
    if auth_type != "SharedAccessKey":
        raise _live_required(
            "Authentication Type", kind, f"{path}.authentication.type", "'SharedAccessKey'"
        )
    key_name, key = auth.get("sasKeyName"), auth.get("sasKey")
    if not (isinstance(key_name, str) and key_name.strip()):
        raise _live_required(
            "SasKeyName", kind, f"{path}.authentication.sasKeyName", "a non-empty string"
        )
    if not (isinstance(key, str) and key.strip()):
        raise _live_required("SasKey", kind, f"{path}.authentication.sasKey", "a non-empty string")
    out["authentication"] = {"type": auth_type, "sasKeyName": key_name, "sasKey": key}
    body = message.get("message")
    if not isinstance(body, str):
        raise _live_required("Message", kind, f"{path}.message", "a string")
    out["message"] = body
    transport = message.get("transportType")
    if transport is not None:
        out["transportType"] = enums.parse(
            transport, enums.TRANSPORT_TYPES, f"{path}.transportType"
        )
    brokered = optional_obj(message, "brokeredMessageProperties", path)
    if brokered is not None:
        out["brokeredMessageProperties"] = _parse_brokered(
            brokered, f"{path}.brokeredMessageProperties"
        )
    custom = string_map(message, "customMessageProperties", path)
    if custom is not None:
        out["customMessageProperties"] = custom
    return out


def _parse_brokered(props: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in _BROKERED_STRINGS:
        value = text(props, name, path, max_len=256)
        if value is not None:
            out[name] = value
    force = boolean(props, "forcePersistence", path)
    if force is not None:
        out["forcePersistence"] = force
    when = props.get("scheduledEnqueueTimeUtc")
    if when is not None:
        instant = datetimes.parse(when, f"{path}.scheduledEnqueueTimeUtc")
        out["scheduledEnqueueTimeUtc"] = datetimes.format_instant(instant)
    ttl = props.get("timeToLive")
    if ttl is not None:
        duration = parse_duration(ttl, f"{path}.timeToLive")
        if duration <= timedelta(0):
            raise BadRequest(f"{path}.timeToLive: must be longer than zero")
        out["timeToLive"] = format_timespan(duration)
    return out


def allowed_retries(policy: Mapping[str, Any] | None) -> int:
    """The retries a (canonical) retryPolicy allows after a failed first attempt: none for
    retryType None; its retryCount (clamped to 0..MAX_RETRY_COUNT), DEFAULT_RETRY_COUNT
    without one or without a policy."""
    if policy is None:
        return DEFAULT_RETRY_COUNT
    if str(policy.get("retryType") or "Fixed").lower() == "none":
        return 0
    count = policy.get("retryCount")
    return DEFAULT_RETRY_COUNT if count is None else max(0, min(int(count), MAX_RETRY_COUNT))


def _parse_retry(retry: dict[str, Any], path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if retry.get("retryType") is not None:
        out["retryType"] = enums.parse(retry["retryType"], enums.RETRY_TYPES, f"{path}.retryType")
    interval = DEFAULT_RETRY_INTERVAL
    if retry.get("retryInterval") is not None:
        interval = _retry_duration(retry, "retryInterval", path)
        out["retryInterval"] = format_timespan(interval)
    count = integer(retry, "retryCount", path, minimum=0, maximum=MAX_RETRY_COUNT)
    if count is not None:
        out["retryCount"] = count
    if retry.get("maxRetryInterval") is not None:
        where = f"{path}.maxRetryInterval"
        if out.get("retryType") != "Exponential":
            raise BadRequest(f"{where}: only with retryType Exponential (null removes it)")
        longest = _retry_duration(retry, "maxRetryInterval", path)
        if longest < interval:
            raise BadRequest(
                f"{where}: {retry['maxRetryInterval']!r} is shorter than the retryInterval"
                f" ({format_timespan(interval)})"
            )
        out["maxRetryInterval"] = format_timespan(longest)
    return out


def _retry_duration(retry: dict[str, Any], name: str, path: str) -> timedelta:
    """A retry policy's duration: TimeSpan or ISO 8601, 15 seconds to 18 months."""
    value = parse_duration(retry[name], f"{path}.{name}")
    if not MIN_RETRY_INTERVAL <= value <= MAX_RETRY_INTERVAL:
        raise BadRequest(
            f"{path}.{name}: {retry[name]!r} is not between 15 seconds and 18 months (548 days)"
        )
    return value


def uses_authentication(action: dict[str, Any]) -> bool:
    """Whether a canonical action (or its error action) authenticates outbound HTTP calls."""
    for part in (action, action.get("errorAction") or {}):
        auth = (part.get("request") or {}).get("authentication")
        if auth and auth.get("type") != "NotSpecified":
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Output


def render_action(action: dict[str, Any], style: WireStyle) -> dict[str, Any]:
    """The wire view: payload first, then type, retryPolicy, errorAction; no secrets."""
    kind = action["type"]
    payload = PAYLOAD.get(kind)
    out: dict[str, Any] = {}
    if payload and payload in action:
        if payload == "request":
            out[payload] = _render_request(action[payload])
        elif payload == "queueMessage":
            out[payload] = {k: v for k, v in action[payload].items() if k != "sasToken"}
        else:
            out[payload] = _render_service_bus(action[payload], style)
    out["type"] = kind
    retry = action.get("retryPolicy")
    if retry is not None:
        rendered: dict[str, Any] = {}
        if "retryType" in retry:
            rendered["retryType"] = enums.camel(retry["retryType"])
        if "retryInterval" in retry:
            rendered["retryInterval"] = style.duration(retry["retryInterval"])
        if "retryCount" in retry:
            rendered["retryCount"] = retry["retryCount"]
        if "maxRetryInterval" in retry:
            rendered["maxRetryInterval"] = style.duration(retry["maxRetryInterval"])
        out["retryPolicy"] = rendered
    if action.get("errorAction") is not None:
        out["errorAction"] = render_action(action["errorAction"], style)
    if action.get("templated"):
        out["templated"] = True
    return out


def _render_request(request: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"uri": mask_uri(request["uri"])} if "uri" in request else {}
    out |= {k: request[k] for k in ("method", "headers", "body") if k in request}
    if "headers" in out:
        out["headers"] = {
            name: MASK if is_credential_name(name) and value else value
            for name, value in out["headers"].items()
        }
    auth = request.get("authentication")
    if auth is not None:
        out["authentication"] = _render_http_auth(auth)
    return out


def _render_http_auth(auth: dict[str, Any]) -> dict[str, Any]:
    kind = auth["type"]
    if kind == "Basic":
        return {"username": auth["username"], "type": kind}
    if kind == "ActiveDirectoryOAuth":
        return {k: auth[k] for k in ("tenant", "audience", "clientId")} | {"type": kind}
    if kind == "ClientCertificate":
        return {
            "certificateThumbprint": auth["certificateThumbprint"],
            "certificateExpiration": auth["certificateExpiration"],
            # The spec's (and the Python SDK's) name for the same value.
            "certificateExpirationDate": auth["certificateExpiration"],
            "certificateSubjectName": auth["certificateSubjectName"],
            "type": kind,
        }
    return {"type": kind}


def _render_service_bus(message: dict[str, Any], style: WireStyle) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in message.items():
        if key == "authentication":
            out[key] = {"sasKeyName": value["sasKeyName"], "type": enums.camel(value["type"])}
        elif key == "transportType":
            out[key] = enums.camel(value)
        elif key == "brokeredMessageProperties" and "timeToLive" in value:
            out[key] = value | {"timeToLive": style.duration(value["timeToLive"])}
        else:
            out[key] = value
    return out
