"""Check-ins of monitors: `/ping/{token}` (success), `/ping/{token}/start`, `/ping/{token}/fail`
and `/ping/{token}/{exitCode}` (0: success, 1..255: failure), by GET (for `curl` in a crontab)
or POST (the body, up to 10 KB of it, is kept as text). No authentication and no api-version:
the token is the credential. The token never reaches a log: the access log shows
`/ping/***` (`horarium.logs`), the audit log leaves check-ins out (`api.audit`), the request
metrics count the route template."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response

from horarium.api import ping_ops, routes
from horarium.api.api_keys import digest
from horarium.api.ping_limits import BURST, PER_SECOND, PingLimiter
from horarium.api.wire import arm_error
from horarium.model.errors import ApiError, NotFound
from horarium.model.monitor import CheckInKind

router = APIRouter(tags=["Horarium extensions"])

MAX_TOKEN = 200  # characters; a longer one is no token (404 without a lookup)
MAX_EXIT_CODE = 255

# The length is documented, not validated: a longer token is no token, answered 404 as any other.
Token = Annotated[
    str,
    Path(
        description="The monitor's ping token (from its pingUrl).",
        json_schema_extra={"maxLength": MAX_TOKEN},
    ),
]
Signal = Annotated[str, Path(description="start, fail, or an exit code 0..255.")]

_NO_AUTH: dict[str, Any] = {"security": []}
_ANSWERS: dict[int | str, dict[str, Any]] = {
    200: {"description": "Recorded", "content": {"text/plain": {"example": "OK"}}},
    404: {"description": "No monitor has this token"},
    413: {"description": "The body is larger than 1 MB"},
    429: {
        "description": f"More than {BURST} check-ins at once, or {PER_SECOND:g} a second on"
        " average, with this token (Retry-After says when to try again)"
    },
}


def limiter(request: Request) -> PingLimiter:
    found: PingLimiter | None = getattr(request.app.state, "ping_limiter", None)
    if found is None:
        found = request.app.state.ping_limiter = PingLimiter()
    return found


async def _ping(request: Request, token: str, kind: CheckInKind, code: int | None) -> Response:
    if len(token) > MAX_TOKEN:
        raise ping_ops.unknown()
    key = digest(token)
    wait = limiter(request).wait(key, time.monotonic())
    if wait:
        refusal = arm_error(
            429,
            "TooManyRequests",
            f"Too many check-ins with this token: at most {BURST} at once and {PER_SECOND:g} a"
            f" second on average; try again in {wait} s.",
        )
        refusal.headers["Retry-After"] = str(wait)
        return refusal
    body = await _text(request)
    check = ping_ops.CheckIn(key, kind, code, body, datetime.now(UTC))
    await ping_ops.check_in(routes._store(request).transactor, check)
    return Response("OK\n", media_type="text/plain")


async def _text(request: Request) -> str:
    """The first `MAX_BODY` bytes of the body as text (a body over 1 MB is refused)."""
    kept = bytearray()
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > routes.MAX_REQUEST_BYTES:
            error = ApiError(
                f"The request body is larger than {routes.MAX_REQUEST_BYTES} bytes (a"
                f" check-in's first {ping_ops.MAX_BODY} bytes are kept).",
                code="RequestEntityTooLarge",
            )
            error.status = 413
            raise error
        if len(kept) < ping_ops.MAX_BODY:
            kept += chunk[: ping_ops.MAX_BODY - len(kept)]
    return kept.decode("utf-8", errors="replace")


def _signal(signal: str) -> tuple[CheckInKind, int | None]:
    lowered = signal.lower()
    if lowered == "start":
        return CheckInKind.START, None
    if lowered == "fail":
        return CheckInKind.FAIL, None
    if signal.isdigit() and len(signal) <= 3 and int(signal) <= MAX_EXIT_CODE:
        code = int(signal)
        return (CheckInKind.SUCCESS if code == 0 else CheckInKind.FAIL), code
    raise NotFound(
        f"'{signal}' is not a check-in: use /ping/{{token}}, /ping/{{token}}/start,"
        f" /ping/{{token}}/fail or /ping/{{token}}/{{exitCode}} (0..{MAX_EXIT_CODE})",
        code="NotFound",
    )


async def ping(request: Request, token: Token) -> Response:
    """A success check-in."""
    return await _ping(request, token, CheckInKind.SUCCESS, None)


async def ping_signal(request: Request, token: Token, signal: Signal) -> Response:
    """`start` (a run began: `maxRuntime` counts from here), `fail`, or the run's exit code."""
    kind, code = _signal(signal)
    return await _ping(request, token, kind, code)


# One route per method, so that each OpenAPI operation has an id of its own.
for _method, _suffix in (("POST", ""), ("GET", "ByGet")):
    router.add_api_route(
        "/ping/{token}",
        ping,
        methods=[_method],
        operation_id=f"Monitors_CheckIn{_suffix}",
        openapi_extra=_NO_AUTH,
        responses=_ANSWERS,
    )
    router.add_api_route(
        "/ping/{token}/{signal}",
        ping_signal,
        methods=[_method],
        operation_id=f"Monitors_CheckInSignal{_suffix}",
        openapi_extra=_NO_AUTH,
        responses=_ANSWERS,
    )
