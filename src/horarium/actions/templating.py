"""Filling a templated action's placeholders (`horarium.model.templates`) from its execution.

Values: `scheduledTime` (when the execution was due) and `executionTime` (when this attempt is
sent) as ISO 8601 UTC (`2024-05-01T12:30:00Z`, a fraction only when there is one),
`executionTag`, `attempt` (the history's retryCount: 0 for an action's first attempt),
`jobName` and `collectionName` (bare names).

Each value is escaped for where it goes:
- `request.uri`: percent-encoded (RFC 3986: only unreserved characters stay as they are);
- `request.body` and a Service Bus `message`: JSON-string escaped when the content type
  (`Content-Type` header, `contentType` property) is JSON (`application/json`, `…+json`): the
  placeholder belongs inside a string literal, and the value is written as that literal's
  characters (`{{attempt}}` outside quotes is a bare number); XML-escaped (`&`, `<`, `>`, `"`,
  `'`) when it is XML (`application/xml`, `text/xml`, `…+xml`); as it is otherwise;
- header values: as they are (no value can hold a line break: a header value holding a control
  character after filling is refused);
- a Storage-queue `message`: as it is (its XML envelope escapes the whole message).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote
from xml.sax.saxutils import escape as xml_escape

from horarium.actions.base import ExecutionContext
from horarium.actions.execution import bare_name
from horarium.actions.fields import ActionInputError, lookup
from horarium.model import templates
from horarium.model.datetimes import format_instant

Escape = Callable[[str], str]

_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_XML_QUOTES = {'"': "&quot;", "'": "&apos;"}


def template_values(context: ExecutionContext, now: datetime | None = None) -> dict[str, str]:
    """The placeholders' values for one attempt; `now`: when it is sent (default: now)."""
    return {
        "scheduledTime": format_instant(context.expected_time),
        "executionTime": format_instant(now or datetime.now(UTC)),
        "executionTag": context.execution_tag,
        "attempt": str(context.attempt),
        "jobName": bare_name(context.job_id),
        "collectionName": bare_name(context.collection_id),
    }


def fill_action(action: Mapping[str, Any], values: Mapping[str, str]) -> dict[str, Any]:
    """A copy of `action` with the placeholders of its templated fields filled."""
    out = dict(action)
    for key, part in action.items():
        if not isinstance(key, str) or not isinstance(part, Mapping):
            continue
        name = key.lower()
        if name == "request":
            out[key] = _fill_request(part, values)
        elif name == "queuemessage":
            out[key] = _fill_fields(part, values, {"message": _as_is})
        elif name in ("servicebusqueuemessage", "servicebustopicmessage"):
            properties = lookup(part, "brokeredMessageProperties")
            content_type = (
                lookup(properties, "contentType") if isinstance(properties, Mapping) else None
            )
            out[key] = _fill_fields(part, values, {"message": body_escape(content_type)})
    return out


def _fill_request(request: Mapping[str, Any], values: Mapping[str, str]) -> dict[str, Any]:
    headers = lookup(request, "headers")
    content_type = None
    if isinstance(headers, Mapping):
        content_type = next(
            (v for k, v in headers.items() if str(k).lower() == "content-type"), None
        )
    out = _fill_fields(request, values, {"uri": _uri_escape, "body": body_escape(content_type)})
    for key, value in request.items():
        if str(key).lower() == "headers" and isinstance(value, Mapping):
            out[key] = {name: _fill_header(name, item, values) for name, item in value.items()}
    return out


def _fill_header(name: str, value: Any, values: Mapping[str, str]) -> Any:
    if not isinstance(value, str):
        return value
    filled = templates.fill(value, values, _as_is)
    if _CONTROL_CHARS.search(filled):
        raise ActionInputError(f"'request.headers.{name}' holds a control character once filled")
    return filled


def _fill_fields(
    part: Mapping[str, Any], values: Mapping[str, str], escapes: Mapping[str, Escape]
) -> dict[str, Any]:
    """A copy of `part` whose string fields named in `escapes` (any case) are filled."""
    by_name = {name.lower(): escape for name, escape in escapes.items()}
    out = dict(part)
    for key, value in part.items():
        escape = by_name.get(str(key).lower())
        if escape is not None and isinstance(value, str):
            out[key] = templates.fill(value, values, escape)
    return out


def body_escape(content_type: Any) -> Escape:
    """How a value is escaped in a body of this content type (see the module's rules)."""
    media = str(content_type or "").split(";", 1)[0].strip().lower()
    if media == "application/json" or media.endswith("+json"):
        return _json_escape
    if media in ("application/xml", "text/xml") or media.endswith("+xml"):
        return _xml_escape
    return _as_is


def _as_is(value: str) -> str:
    return value


def _uri_escape(value: str) -> str:
    return quote(value, safe="")


def _json_escape(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)[1:-1]


def _xml_escape(value: str) -> str:
    return xml_escape(value, _XML_QUOTES)
