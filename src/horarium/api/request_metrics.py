"""HTTP request metrics: each request counted by its route template (the FastAPI route's path,
`/subscriptions/{subscriptionId}/…`, never the raw path: names would make a series per job),
method and status, and its latency observed.

A pure ASGI middleware placed inside the path canonicalisation, so it sees the scope the router
fills in (`scope["route"]`). A request answered before routing (authentication refused it) is
matched against the routes here; one that matches none is `unmatched`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter
from prometheus_client import Counter, Histogram
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from horarium.observe import metrics

UNMATCHED = "unmatched"
METHODS = frozenset({"GET", "HEAD", "PUT", "PATCH", "POST", "DELETE", "OPTIONS"})

_series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def route_template(scope: Scope, routers: Sequence[APIRouter] = ()) -> str:
    """The path template of the route that answered (or would have answered) the request:
    the router's choice, or else the first route of the app or of `routers` that matches."""
    route = scope.get("route")
    if route is None:
        app: Any = scope.get("app")
        candidates = [*getattr(getattr(app, "router", None), "routes", ())]
        candidates += [r for router in routers for r in router.routes]
        for candidate in candidates:
            if isinstance(getattr(candidate, "path", None), str):
                match, _ = candidate.matches(scope)
                if match is not Match.NONE:
                    route = candidate
                    break
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else UNMATCHED


def _children(route: str, method: str, status: int) -> tuple[Counter, Histogram]:
    key = (route, method, status)
    found = _series.get(key)
    if found is None:
        found = _series[key] = (
            metrics.HTTP_REQUESTS.labels(route, method, str(status)),
            metrics.HTTP_DURATION.labels(route, method),
        )
    return found


class RequestMetrics:
    """`routers`: the app's included routers, whose routes name the requests answered before
    routing."""

    def __init__(self, app: ASGIApp, *, routers: Sequence[APIRouter] = ()) -> None:
        self.app = app
        self.routers = tuple(routers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = metrics.clock()
        status = 500  # the app failed before answering

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            method = scope["method"] if scope["method"] in METHODS else "other"
            requests, duration = _children(route_template(scope, self.routers), method, status)
            requests.inc()
            duration.observe(metrics.clock() - began)
