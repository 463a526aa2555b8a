"""Horarium's read-only extensions for the web dashboard (`/ui`): a subscription's recent
failures, the newest outcomes of each job of a collection, and the scheduler processes'
activity (only for callers reaching every subscription: it spans tenants). Same dependencies as
`routes.router`: authorization, then api-version."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from horarium.api import engine_ops, failures_ops, outcomes_ops, routes
from horarium.api.query import next_link, parse_filter
from horarium.api.wire import ArmJSONResponse
from horarium.model.names import PROVIDER, check_subscription

router = APIRouter(dependencies=routes.router.dependencies, tags=["Horarium extensions"])

FAILURES_PAGE = 50


def _ok(schema: str) -> dict[int | str, dict[str, Any]]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    return {200: {"description": "OK", "content": {"application/json": {"schema": ref}}}}


async def _read(request: Request, work: Callable[[Any], Awaitable[Any]]) -> Any:
    async with request.app.state.store.read() as conn:
        return await work(conn)


@router.get(
    routes.SUBSCRIPTION + f"/providers/{PROVIDER}/failures",
    operation_id="Failures_List",
    responses=_ok("FailureListResult"),
    response_class=ArmJSONResponse,
)
async def list_failures(
    request: Request,
    subscriptionId: routes.Subscription,
    top: routes.Top = None,
    skip: routes.Skip = None,
    filter: Annotated[
        str | None, Query(alias="$filter", description="status eq Failed|Postponed|Skipped")
    ] = None,
) -> Response:
    """The subscription's Failed, Postponed and Skipped history entries across its job
    collections, newest first, each with `jobId` and `jobState` (Faulted jobs show there)."""
    check_subscription(subscriptionId)
    status = parse_filter(filter, "status", failures_ops.FAILURE_STATUSES)
    offset = skip or 0
    value, more = await _read(
        request,
        lambda c: failures_ops.list_page(
            c, subscriptionId, status=status, limit=top or FAILURES_PAGE, offset=offset
        ),
    )
    link = next_link(request, top=top, skip=offset, shown=len(value), more=more)
    return ArmJSONResponse({"value": value, "nextLink": link})


@router.get(
    routes.COLLECTION + "/outcomes",
    operation_id="JobCollections_ListOutcomes",
    responses=_ok("JobOutcomesListResult"),
    response_class=ArmJSONResponse,
)
async def list_outcomes(
    request: Request,
    name: routes.Collection,
    count: Annotated[
        int,
        Query(
            ge=1,
            le=outcomes_ops.MAX_COUNT,
            description=f"Entries per job, 1..{outcomes_ops.MAX_COUNT}.",
        ),
    ] = outcomes_ops.DEFAULT_COUNT,
) -> Response:
    """Every job of the collection with its newest `count` history entries (newest first;
    messages cut to 300 characters): one read for a whole jobs list."""
    return ArmJSONResponse(await _read(request, lambda c: outcomes_ops.list_all(c, name, count)))


@router.get(
    f"/providers/{PROVIDER}/engine",
    operation_id="Engine_Get",
    responses=_ok("EngineStatus"),
    response_class=ArmJSONResponse,
)
async def get_engine(request: Request) -> Response:
    """Executions per minute over the last hour, executions in flight per process, and the
    due backlog, for every subscription (callers whose key reaches all of them)."""
    now = datetime.now(UTC)
    return ArmJSONResponse(await _read(request, lambda c: engine_ops.status(c, now)))
