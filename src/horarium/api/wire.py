"""HTTP-level wire details: compact ARM JSON responses, ARM errors, and per-client style."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request, Response

from horarium.model.actions import WireStyle

JSON_TYPE = "application/json; charset=utf-8"


def dumps(content: Any) -> bytes:
    """Compact JSON, as the live service wrote it (Content-Length = minified size)."""
    return json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode()


class ArmJSONResponse(Response):
    media_type = JSON_TYPE

    def render(self, content: Any) -> bytes:
        return dumps(content)


def arm_error(status: int, code: str, message: str) -> ArmJSONResponse:
    return ArmJSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def empty(status: int = 200) -> Response:
    """200 with an empty body (collection DELETE / enable / disable, job DELETE / run)."""
    return Response(status_code=status)


def style_for(request: Request) -> WireStyle:
    """azure-mgmt-scheduler 7.x (azure-core generation) cannot read TimeSpan durations (its
    CHANGELOG 1.1.3 bug, never fixed in 7.x): it gets ISO 8601; every other client gets the
    live service's TimeSpans."""
    agent = request.headers.get("user-agent", "").lower()
    return WireStyle(iso_durations="azsdk-python-mgmt-scheduler" in agent)


def read_json(raw: bytes) -> Any:
    """The request body as JSON; a 400 saying where it is malformed."""
    from horarium.model.errors import BadRequest

    if not raw.strip():
        raise BadRequest("The request body is required (a JSON object).")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadRequest(f"The request body is not UTF-8 text ({e}).") from e

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a JSON value")

    try:
        value = json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as e:
        raise BadRequest(
            f"The request body is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})."
        ) from e
    except (ValueError, RecursionError) as e:
        raise BadRequest(f"The request body is not valid JSON: {e}.") from e
    if _depth(value) > MAX_DEPTH:
        raise BadRequest(f"The request body is nested more than {MAX_DEPTH} levels deep.")
    return value


MAX_DEPTH = 32


def _depth(value: Any) -> int:
    """How deeply objects and lists nest (without recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
