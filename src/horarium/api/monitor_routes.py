"""The routes of check-in monitors (a Horarium extension under the ARM paths,
`…/jobCollections/{c}/monitors/{name}`): PUT / GET / list / DELETE, `regeneratePingUrl`, their
`checkIns` and `upcoming` expected check-ins. Same dependencies as `routes.router`:
authorization, then api-version. The check-ins themselves are `api.ping_routes`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from horarium.api import monitor_ops, routes
from horarium.api.query import DEFAULT_PAGE, next_link
from horarium.api.wire import ArmJSONResponse, empty

router = APIRouter(dependencies=routes.router.dependencies, tags=["Horarium extensions"])

MONITORS = routes.COLLECTION + "/monitors"
MONITOR = MONITORS + "/{monitorName}"
MonitorPart = Annotated[str, Path(description="The monitor name.")]


def _base_url(request: Request) -> str:
    """Where ping URLs start: `--public-url` when set, else the request's own base URL."""
    public: str | None = getattr(request.app.state, "public_url", None)
    return public or str(request.base_url)


@router.get(
    MONITORS,
    operation_id="Monitors_List",
    responses=routes._ok("MonitorListResult", 200),
    response_class=ArmJSONResponse,
)
async def list_monitors(
    request: Request, name: routes.Collection, top: routes.Top = None, skip: routes.Skip = None
) -> Response:
    """The collection's monitors, by name."""
    offset = skip or 0
    value, more = await routes._read(
        request,
        lambda c: monitor_ops.list_page(c, name, limit=top or DEFAULT_PAGE, offset=offset),
    )
    link = next_link(request, top=top, skip=offset, shown=len(value), more=more)
    return ArmJSONResponse({"value": value, "nextLink": link})


@router.get(
    MONITOR,
    operation_id="Monitors_Get",
    responses=routes._ok("MonitorDefinition", 200),
    response_class=ArmJSONResponse,
)
async def get_monitor(
    request: Request, name: routes.Collection, monitorName: MonitorPart
) -> Response:
    return ArmJSONResponse(
        await routes._read(request, lambda c: monitor_ops.get(c, name, monitorName))
    )


@router.put(
    MONITOR,
    operation_id="Monitors_CreateOrUpdate",
    openapi_extra=routes._body_doc("MonitorDefinition"),
    responses=routes._ok("MonitorDefinition", 200, 201),
    response_class=ArmJSONResponse,
)
async def put_monitor(
    request: Request, name: routes.Collection, monitorName: MonitorPart
) -> Response:
    """Create (201: the answer carries `pingUrl`, the only time it is shown) or replace."""
    raw = await routes._body(request)
    base = _base_url(request)
    status, body = await routes._store(request).write(
        lambda c: monitor_ops.put(c, name, monitorName, raw, routes._now(), base)
    )
    return ArmJSONResponse(body, status_code=status)


@router.delete(MONITOR, operation_id="Monitors_Delete", responses=routes._EMPTY)
async def delete_monitor(
    request: Request, name: routes.Collection, monitorName: MonitorPart
) -> Response:
    await routes._store(request).write(lambda c: monitor_ops.delete(c, name, monitorName))
    return empty()


@router.post(
    MONITOR + "/regeneratePingUrl",
    operation_id="Monitors_RegeneratePingUrl",
    responses=routes._ok("MonitorDefinition", 200),
    response_class=ArmJSONResponse,
)
async def regenerate_ping_url(
    request: Request, name: routes.Collection, monitorName: MonitorPart
) -> Response:
    """A new ping token (in the answer's `pingUrl`); the old one stops working."""
    base = _base_url(request)
    body = await routes._store(request).write(
        lambda c: monitor_ops.regenerate(c, name, monitorName, routes._now(), base)
    )
    return ArmJSONResponse(body)


@router.get(
    MONITOR + "/checkIns",
    operation_id="Monitors_ListCheckIns",
    responses=routes._ok("CheckInListResult", 200),
    response_class=ArmJSONResponse,
)
async def list_check_ins(
    request: Request,
    name: routes.Collection,
    monitorName: MonitorPart,
    top: routes.Top = None,
    skip: routes.Skip = None,
) -> Response:
    """The monitor's check-ins, newest first (kept as job history is)."""
    offset = skip or 0
    value, more = await routes._read(
        request,
        lambda c: monitor_ops.check_ins_page(
            c, name, monitorName, limit=top or DEFAULT_PAGE, offset=offset
        ),
    )
    link = next_link(request, top=top, skip=offset, shown=len(value), more=more)
    return ArmJSONResponse({"value": value, "nextLink": link})


@router.get(
    MONITOR + "/upcoming",
    operation_id="Monitors_ListUpcoming",
    responses=routes._ok("UpcomingExecutionList", 200),
    response_class=ArmJSONResponse,
)
async def get_upcoming(
    request: Request, name: routes.Collection, monitorName: MonitorPart, count: routes.Count = 10
) -> Response:
    """The next expected check-ins (UTC and wall clock, calendars and daylight saving marked),
    computed as a job's upcoming executions are."""
    now = routes._now()
    return ArmJSONResponse(
        await routes._read(
            request, lambda c: monitor_ops.upcoming(c, name, monitorName, count, now)
        )
    )
