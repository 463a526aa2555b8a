"""HTTP-level wire details: compact ARM JSON responses, ARM errors, and per-client style."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi import Request, Response

from horarium.model.actions import WireStyle
from horarium.model.errors import BadRequest

JSON_TYPE = "application/json; charset=utf-8"


def dumps(content: Any) -> bytes:
    """Compact JSON, as the live service wrote it (Content-Length = minified size). A value
    that UTF-8 cannot hold (a lone surrogate stored before request bodies were checked) is
    written as a \\u escape instead of failing the response."""
    text = json.dumps(content, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(content, separators=(",", ":")).encode()


class ArmJSONResponse(Response):
    media_type = JSON_TYPE

    def render(self, content: Any) -> bytes:
        return dumps(content)


def arm_error(status: int, code: str, message: str) -> ArmJSONResponse:
    return ArmJSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def internal_error() -> ArmJSONResponse:
    """The 500 of an error nothing else answered (its traceback goes to the log, not here)."""
    return arm_error(500, "InternalServerError", "The server encountered an internal error.")


def empty(status: int = 200) -> Response:
    """200 with an empty body (collection DELETE / enable / disable, job DELETE / run)."""
    return Response(status_code=status)


def style_for(request: Request) -> WireStyle:
    """azure-mgmt-scheduler 7.x (azure-core generation) cannot read TimeSpan durations (its
    CHANGELOG 1.1.3 bug, never fixed in 7.x): it gets ISO 8601; every other client gets the
    live service's TimeSpans."""
    agent = request.headers.get("user-agent", "").lower()
    return WireStyle(
        iso_durations="azsdk-python-mgmt-scheduler" in agent,
        described=expands_description(request.query_params.get("$expand")),
    )


EXPANDABLE = "scheduleDescription"  # `$expand` of a job's answers (a Horarium extension)


def expands_description(value: str | None) -> bool:
    """`$expand=scheduleDescription` (any case): job answers carry the schedule in words.
    Without it they are exactly Azure's; any other value is a 400."""
    if value is None:
        return False
    if value.strip().lower() != EXPANDABLE.lower():
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise BadRequest(f"$expand: {shown!r} is not supported; the one value is {EXPANDABLE}")
    return True


def read_json(raw: bytes) -> Any:
    """The request body as JSON, checked once for what no stored value may hold: a 400 saying
    where it is malformed, where a lone surrogate or a NUL character is (in a property name or
    a value), which property is given twice in one object, or that it nests too deeply."""
    if not raw.strip():
        raise BadRequest("The request body is required (a JSON object).")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadRequest(f"The request body is not UTF-8 text ({e}).") from e

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        value = json.loads(text, parse_constant=refuse_constant, object_pairs_hook=_Members)
    except json.JSONDecodeError as e:
        raise BadRequest(
            f"The request body is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})."
        ) from e
    except (ValueError, RecursionError) as e:
        raise BadRequest(f"The request body is not valid JSON: {e}.") from e
    return _checked(value, "", 1)


MAX_DEPTH = 32

# What no stored string may hold: NUL, and UTF-16 surrogates (a JSON escape such as "\ud800" that
# is not half of a pair decodes to one; it cannot be encoded as UTF-8, so it could be neither
# stored in PostgreSQL nor written in a response).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class _Members(list[tuple[str, Any]]):
    """A JSON object's members in the order given, a name given twice kept twice."""


def _checked(value: Any, path: str, depth: int) -> Any:
    """`value` with every object made a dict, once its names and strings passed the checks;
    `path` is where it sits (`properties.action.request.uri`, `…minutes[1]`)."""
    if isinstance(value, str):
        _check_text(value, path, "")
        return value
    if not isinstance(value, list):  # a number, true, false or null (_Members is a list)
        return value
    if depth > MAX_DEPTH:
        raise BadRequest(f"The request body is nested more than {MAX_DEPTH} levels deep.")
    if not isinstance(value, _Members):
        return [_checked(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}  # lower-case name -> the first spelling given
    for name, item in value:
        where = f"{path}.{_shown(name)}" if path else _shown(name)
        _check_text(name, where, "the property name ")
        checked = _checked(item, where, depth + 1)
        if name in out:
            raise BadRequest(f"{where}: duplicate key (the property is given twice)")
        first = spelled.setdefault(name.lower(), name)
        if first != name and _encoded(out[first]) != _encoded(checked):
            raise BadRequest(
                f"{where}: duplicate key ('{_shown(first)}' is given too, with another value;"
                " property names match case-insensitively)"
            )
        out[name] = checked
    return out


def _check_text(text: str, path: str, what: str) -> None:
    found = _UNSTORABLE.search(text)
    if found is None:
        return
    where = path or "The request body"
    char = found.group()
    if char == "\x00":
        raise BadRequest(f"{where}: {what}contains a NUL character (\\u0000), which is not allowed")
    raise BadRequest(
        f"{where}: {what}contains a lone surrogate ({_shown(char)}), which is not valid Unicode"
    )


def _shown(text: str) -> str:
    """`text` with NUL and surrogates written as \\uXXXX escapes (safe to put in a message)."""
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _encoded(value: Any) -> str:
    """One text per JSON value (1, 1.0 and true differ), to compare two values of a name."""
    return json.dumps(value, sort_keys=True)
