"""The operator's endpoints: `/healthz` (the process answers), `/readyz` (it can do its work:
`horarium.observe.health`) and `/metrics` (Prometheus text: `horarium.observe.exposition`).

`/healthz` and `/readyz` need no caller (load balancers and orchestrators probe them) but the
Host check applies; they read nothing heavy. `/readyz?verbose` adds the node's view of the
cluster (`NodeView`: node ids name hosts), so it takes the same caller as `/metrics`.
`/metrics` needs a bearer token that reaches every subscription (an API key made with
`--subscription '*'`, reader or contributor, or such an OpenID Connect token): the counts are
the whole service's. `--metrics-public` opens both.

Served by the management API (`create_api`) and, with `--metrics-port`, by a listener of their
own (`create_probe_app`): a worker's only HTTP."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from starlette.exceptions import HTTPException

from horarium.api.authentication import Authentication, Authenticator
from horarium.api.authorization import Forbidden
from horarium.api.hosts import LOOPBACK_NAMES, HostCheck, host_name
from horarium.api.principal import ALL_SUBSCRIPTIONS, AuthenticationError, Principal
from horarium.api.request_metrics import RequestMetrics
from horarium.api.unavailable import Unavailable
from horarium.api.wire import ArmJSONResponse, arm_error
from horarium.config import Settings
from horarium.loopback import is_loopback
from horarium.model import datetimes
from horarium.model.errors import ApiError
from horarium.observe.exposition import CONTENT_TYPE, Exposition
from horarium.observe.health import NodeView, Problem, Readiness, beat_age
from horarium.store.resources.engine_status import NodeRow

HEALTH = "/healthz"
READY = "/readyz"
METRICS = "/metrics"

router = APIRouter()


def public_paths(metrics_public: bool) -> frozenset[str]:
    """The probe paths that need no caller."""
    return frozenset({HEALTH, READY, METRICS} if metrics_public else {HEALTH, READY})


def install(app: FastAPI, readiness: Readiness, exposition: Exposition) -> None:
    """Give the app what its probes answer from (once the database is open)."""
    app.state.readiness = readiness
    app.state.exposition = exposition


@router.get(HEALTH, include_in_schema=False)
async def healthz() -> Response:
    """200 whenever the process answers."""
    return ArmJSONResponse({"status": "alive"})


@router.get(READY, include_in_schema=False)
async def readyz(request: Request) -> Response:
    """200 when ready; 503 with an ARM error naming what is not. `?verbose`: the body also has
    `node`, this node's view of the cluster (for a caller who may read /metrics)."""
    verbose = "verbose" in request.query_params
    if verbose and not request.app.state.metrics_public:
        refusal = await _refused(request)
        if refusal is not None:
            return refusal
    readiness: Readiness | None = getattr(request.app.state, "readiness", None)
    if readiness is None:
        problems = [Problem("Starting", "The service is starting.")]
    else:
        problems = await readiness.problems()
    body: dict[str, Any]
    if not problems:
        body = {"status": "ready"}
    else:
        body = {
            "error": {
                "code": "NotReady",
                "message": "Not ready. " + " ".join(p.message for p in problems),
                "details": [{"code": p.code, "message": p.message} for p in problems],
            }
        }
    if verbose and readiness is not None:
        body["node"] = _node_json(await readiness.view(problems))
    return ArmJSONResponse(body, status_code=503 if problems else 200)


async def _refused(request: Request) -> Response | None:
    """None when the caller may read the node's view; else the answer refusing it (the
    probe paths skip the authentication middleware: the token is checked here)."""
    authenticator: Authenticator | None = getattr(request.app.state, "authenticator", None)
    if authenticator is None:
        return None  # --auth none: every caller reaches every subscription
    try:
        principal = await authenticator.authenticate(request.headers.get("authorization"))
    except AuthenticationError as e:
        refusal = arm_error(401, "AuthenticationFailed", str(e))
        refusal.headers["WWW-Authenticate"] = "Bearer"
        return refusal
    request.state.principal = principal  # for the audit log and the request metrics
    _may_read(principal, "/readyz?verbose")
    return None


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _node_row_json(row: NodeRow, now: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "host": row.host,
        "pid": row.pid,
        "version": row.version,
        "schemaRevision": row.schema_revision,
        "clockOffsetSeconds": _seconds(row.clock_offset),
        "started": datetimes.format_instant(row.started),
        "lastBeatAgeSeconds": _seconds(beat_age(now, row.last_beat)),
    }


def _node_json(view: NodeView) -> dict[str, Any]:
    return {
        "id": view.node,
        "host": view.host,
        "pid": view.pid,
        "roles": list(view.roles),
        "databaseReachable": view.database_reachable,
        "listening": view.listening,
        "heartbeatAgeSeconds": _seconds(view.heartbeat_age),
        "leasesHeld": view.leases_held,
        "claiming": view.node is not None and view.holding_off is None,
        "notClaimingBecause": view.holding_off,
        "clockOffsetSeconds": _seconds(view.clock_offset),
        "liveNodes": None
        if view.live_nodes is None
        else [_node_row_json(row, view.now) for row in view.live_nodes],
    }


@router.get(METRICS, include_in_schema=False)
async def metrics_text(request: Request) -> Response:
    """The process's metrics in Prometheus's text format."""
    if not request.app.state.metrics_public:
        _may_read(getattr(request.state, "principal", None), METRICS)
    exposition: Exposition | None = getattr(request.app.state, "exposition", None)
    if exposition is None:
        return arm_error(503, "NotReady", "Not ready. The service is starting.")
    return Response(await exposition.render(), media_type=CONTENT_TYPE)


def _may_read(principal: Principal | None, what: str) -> None:
    if principal is None or ALL_SUBSCRIPTIONS not in principal.subscriptions:
        name = principal.name if principal is not None else "-"
        raise Forbidden(
            f"The client '{name}' may not read {what}: it takes a key or token that reaches"
            " every subscription (horarium keys create --subscription '*' --role reader)."
        )


def create_probe_app(
    *,
    authenticator: Authenticator | None,
    allowed_hosts: Collection[str],
    metrics_public: bool,
) -> FastAPI:
    """An app answering only the probes (for `--metrics-port`); `install` it before serving."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.metrics_public = metrics_public
    app.state.authenticator = authenticator
    app.include_router(router)

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> Response:
        return arm_error(exc.status, exc.code, exc.message)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return arm_error(
                404,
                "NotFound",
                f"No resource at '{request.method} {request.url.path}'. This port answers"
                f" {METRICS}, {HEALTH} and {READY}.",
            )
        return arm_error(exc.status_code, "BadRequest", str(exc.detail))

    app.add_middleware(
        Authentication, authenticator=authenticator, public_paths=public_paths(metrics_public)
    )
    app.add_middleware(Unavailable)
    app.add_middleware(RequestMetrics, routers=(router,))
    app.add_middleware(HostCheck, allowed=frozenset(allowed_hosts))
    return app


def probe_hosts(settings: Settings) -> frozenset[str]:
    """Host names the `--metrics-port` listener answers: --allowed-hosts, or its bind address
    and the loopback names."""
    given = settings.allowed_hosts or (settings.metrics_host, *LOOPBACK_NAMES)
    return frozenset(host_name(h) for h in given if host_name(h))


def probe_warnings(settings: Settings) -> list[str]:
    """Start-up warnings about /metrics: public, or read with tokens over plain http."""
    found = []
    if settings.metrics_public:
        found.append(
            "/metrics needs no token (--metrics-public): anyone who can connect may read the"
            " service's metrics."
        )
    elif settings.metrics_port is not None and not is_loopback(settings.metrics_host):
        found.append(
            f"the metrics port listens on {settings.metrics_host}:{settings.metrics_port}"
            " without TLS: the tokens that read /metrics travel in clear text unless a TLS"
            " proxy is in front."
        )
    return found
