"""The ASGI application of the management API: routes, ARM errors for every failure, ARM-style
case-insensitive paths and request ids."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from contextlib import AbstractAsyncContextManager
from importlib import metadata
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from horarium import ui
from horarium.api import dashboard_routes, monitor_routes, openapi, ping_routes, probes
from horarium.api.audit import Audit
from horarium.api.authentication import Authentication, Authenticator
from horarium.api.hosts import LOOPBACK_NAMES, HostCheck
from horarium.api.monitor_ops import PING_PATH
from horarium.api.request_ids import RequestIds
from horarium.api.request_metrics import RequestMetrics
from horarium.api.routes import router
from horarium.api.unavailable import Unavailable
from horarium.api.wire import arm_error, internal_error
from horarium.model.errors import ApiError
from horarium.recurrence import RecurrenceError

log = logging.getLogger(__name__)


def _version() -> str:
    try:
        return metadata.version("horarium")
    except metadata.PackageNotFoundError:
        return "0"


# The fixed words of the ARM paths, in their canonical spelling (ARM matches them in any case).
_WORDS = {
    w.lower(): w
    for w in (
        "subscriptions",
        "resourceGroups",
        "providers",
        "Microsoft.Scheduler",
        "jobCollections",
        "jobs",
        "history",
        "run",
        "upcoming",
        "enable",
        "disable",
        "failures",
        "engine",
        "monitors",
        "checkIns",
        "regeneratePingUrl",
    )
}
# Where names sit in "/".split parts (parts[0] is the empty string before the first "/"):
# /subscriptions/{2}/resourceGroups/{4}/providers/Microsoft.Scheduler/jobCollections/{8}/jobs/{10}
_NAMES = {2, 4, 8, 10}
_NAMES_WITHOUT_GROUP = {2}  # /subscriptions/{2}/providers/Microsoft.Scheduler/jobCollections


def canonical_path(path: str) -> str:
    """The path with its fixed words spelled canonically; names are left alone."""
    parts = path.split("/")
    if len(parts) > 1 and parts[1].lower() == "providers":
        names: set[int] = set()  # /providers/Microsoft.Scheduler/…: the whole service
    elif len(parts) > 3 and parts[3].lower() == "providers":
        names = _NAMES_WITHOUT_GROUP
    else:
        names = _NAMES
    for i, part in enumerate(parts):
        if i not in names:
            parts[i] = _WORDS.get(part.lower(), part)
    return "/".join(parts)


class CanonicalPaths:
    """ASGI middleware applying `canonical_path`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = canonical_path(scope["path"])
            if path != scope["path"]:
                scope = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)


def _validation_message(error: RequestValidationError) -> tuple[str, str]:
    first: dict[str, Any] = error.errors()[0] if error.errors() else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body")]
    field = ".".join(loc) or "request"
    if field == "api-version" and first.get("type") == "missing":
        return (
            "MissingApiVersionParameter",
            "The api-version query parameter (?api-version=) is required for all requests.",
        )
    given = first.get("input")
    shown = f" (given {given!r})" if isinstance(given, str | int) else ""
    return "BadRequest", f"{field}: {first.get('msg', 'invalid')}{shown}"


def create_api(
    lifespan: Callable[[FastAPI], AbstractAsyncContextManager[None]] | None = None,
    *,
    authenticator: Authenticator | None,
    allowed_hosts: Collection[str] = LOOPBACK_NAMES,
    public_url: str | None = None,
    metrics_public: bool = False,
) -> FastAPI:
    """The FastAPI app; the caller's `lifespan` puts a `Store` at `app.state.store` (and opens
    the `authenticator`; None: authentication is off) and `probes.install`s the probes' state.
    Requests are answered only for the `allowed_hosts` (names without port); nextLink URLs start
    with `public_url` when given; `metrics_public`: /metrics needs no caller.

    Middleware, outermost first: the Host check, canonical path words, request metrics, the
    audit log, request ids, 503 while the database is unreachable (`api.unavailable`),
    authentication; then the routes, where `authorization.authorize` runs (the probes,
    `horarium.api.probes`, have rules of their own)."""
    app = FastAPI(
        title="Horarium",
        version=_version(),
        description="A self-hosted job scheduler that speaks the Azure Scheduler REST API"
        " (api-version 2016-03-01).",
        openapi_url="/openapi.json",
        docs_url=None,  # served from the package by horarium.ui, not from a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.public_url = public_url
    app.state.metrics_public = metrics_public
    app.state.authenticator = authenticator
    app.include_router(router)
    app.include_router(dashboard_routes.router)
    app.include_router(monitor_routes.router)
    app.include_router(ping_routes.router)
    app.include_router(probes.router)
    openapi.install(app)
    ui_paths = ui.install(app)

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> Response:
        return arm_error(exc.status, exc.code, exc.message)

    @app.exception_handler(RecurrenceError)
    async def schedule_error(_request: Request, exc: RecurrenceError) -> Response:
        # A search for runs that stopped at a limit (after the definition was validated).
        return arm_error(400, "BadRequest", f"properties.{exc}")

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> Response:
        code, message = _validation_message(exc)
        return arm_error(400, code, message)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return arm_error(
                404,
                "NotFound",
                f"No resource at '{request.method} {request.url.path}'. Horarium serves the"
                " Azure Scheduler API under /subscriptions/{subscriptionId}/…/providers/"
                "Microsoft.Scheduler/jobCollections (see /openapi.json).",
            )
        if exc.status_code == 405:
            return arm_error(
                405,
                "MethodNotAllowed",
                f"The method '{request.method}' is not allowed on '{request.url.path}'.",
            )
        return arm_error(exc.status_code, "BadRequest", str(exc.detail))

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, exc: Exception) -> Response:
        log.exception("unexpected error", exc_info=exc)
        return internal_error()

    public_paths = {"/openapi.json", *ui_paths}
    public_paths |= probes.public_paths(metrics_public)
    app.add_middleware(
        Authentication,
        authenticator=authenticator,
        public_paths=public_paths,
        public_prefixes=(PING_PATH,),
    )
    app.add_middleware(Unavailable)
    app.add_middleware(RequestIds)
    app.add_middleware(Audit)
    routers = (router, dashboard_routes.router, monitor_routes.router, ping_routes.router)
    app.add_middleware(RequestMetrics, routers=(*routers, probes.router))
    app.add_middleware(CanonicalPaths)
    app.add_middleware(HostCheck, allowed=frozenset(allowed_hosts))
    return app
