"""The HTTP routes of the Azure Scheduler 2016-03-01 API (and Horarium's `upcoming`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from horarium.api import (
    backfill_ops,
    calendar_ops,
    calendar_preview,
    collection_ops,
    collection_upcoming,
    history_ops,
    job_ops,
    upcoming,
)
from horarium.api.authorization import authorize
from horarium.api.query import DEFAULT_PAGE, next_link, parse_filter
from horarium.api.wire import ArmJSONResponse, empty, read_json, style_for
from horarium.config import Settings
from horarium.model import enums
from horarium.model.enums import CollectionState
from horarium.model.errors import ApiError, BadRequest
from horarium.model.names import CollectionName, check_resource_group, check_subscription
from horarium.observe import metrics
from horarium.store.resources.access import Store

T = TypeVar("T")

SUPPORTED_VERSIONS = ("2016-03-01", "2016-01-01")
MAX_REQUEST_BYTES = 1024 * 1024

SUBSCRIPTION = "/subscriptions/{subscriptionId}"
GROUP = SUBSCRIPTION + "/resourceGroups/{resourceGroupName}"
COLLECTIONS = "/providers/Microsoft.Scheduler/jobCollections"
COLLECTION = GROUP + COLLECTIONS + "/{jobCollectionName}"
JOB = COLLECTION + "/jobs/{jobName}"
CALENDAR = COLLECTION + "/calendars/{calendarName}"


def _api_version(
    api_version: Annotated[
        str,
        Query(
            alias="api-version",
            description="2016-03-01 (2016-01-01 is accepted too).",
            examples=["2016-03-01"],
        ),
    ],
) -> str:
    if api_version not in SUPPORTED_VERSIONS:
        raise BadRequest(
            f"The api-version '{api_version}' is not supported for the resource provider"
            f" 'Microsoft.Scheduler'. The supported api-versions are"
            f" '{', '.join(SUPPORTED_VERSIONS)}'.",
            code="InvalidApiVersionParameter",
        )
    return api_version


# Authorization first: a caller learns nothing about a request it may not make.
router = APIRouter(dependencies=[Depends(authorize), Depends(_api_version)])

Subscription = Annotated[str, Path(description="The subscription id.")]
Group = Annotated[str, Path(description="The resource group name.")]
CollectionPart = Annotated[str, Path(description="The job collection name.")]
JobPart = Annotated[str, Path(description="The job name.")]
Top = Annotated[int | None, Query(alias="$top", ge=1, le=100, description="Page size, 1..100.")]
Skip = Annotated[
    int | None, Query(alias="$skip", ge=0, le=2_000_000_000, description="Entries to skip.")
]
# Read by `wire.style_for`; declared here so that /openapi.json documents it.
Expand = Annotated[
    str | None,
    Query(
        alias="$expand",
        description="Horarium: `scheduleDescription` adds the job's schedule in plain English"
        " (read-only `properties.scheduleDescription`); without it the answer is Azure's.",
    ),
]


def _collection(
    subscriptionId: Subscription, resourceGroupName: Group, jobCollectionName: CollectionPart
) -> CollectionName:
    return CollectionName(subscriptionId, resourceGroupName, jobCollectionName).validate()


Collection = Annotated[CollectionName, Depends(_collection)]


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _settings(request: Request) -> Settings:
    """The service's settings (the defaults when the app was built without them)."""
    settings: Settings | None = getattr(request.app.state, "settings", None)
    return settings if settings is not None else Settings()


async def _write_due(request: Request, work: Callable[[Any], Awaitable[T]]) -> T:
    """A write that may make work due sooner: the engines of every node are woken when it
    commits (PostgreSQL: `store.core.wakeups`), and this process's scheduler (if any) at once."""
    result = await _store(request).write(work, wake=True)
    notify: Callable[[], None] | None = getattr(request.app.state, "on_change", None)
    if notify is not None:
        notify()
    return result


def _now() -> datetime:
    return datetime.now(UTC)


async def _body(request: Request, limit: int = MAX_REQUEST_BYTES) -> Any:
    length = request.headers.get("content-length")
    if length and length.isdigit() and int(length) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return read_json(b"".join(chunks))


def _too_large(limit: int = MAX_REQUEST_BYTES) -> ApiError:
    why = "a job may be at most 16 KB" if limit == MAX_REQUEST_BYTES else "a calendar's ical 1 MB"
    error = ApiError(
        f"The request body is larger than {limit} bytes ({why}).",
        code="RequestEntityTooLarge",
    )
    error.status = 413
    return error


def _body_doc(schema: str) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": ref}},
        }
    }


def _ok(schema: str, *codes: int) -> dict[int | str, dict[str, Any]]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    return {
        code: {"description": "OK", "content": {"application/json": {"schema": ref}}}
        for code in codes
    }


_EMPTY: dict[int | str, dict[str, Any]] = {200: {"description": "Done (empty body)"}}


async def _read(request: Request, work: Callable[[Any], Awaitable[Any]]) -> Any:
    async with _store(request).read() as conn:
        return await work(conn)


# -- job collections ---------------------------------------------------------------------------


@router.get(
    SUBSCRIPTION + COLLECTIONS,
    operation_id="JobCollections_ListBySubscription",
    responses=_ok("JobCollectionListResult", 200),
    response_class=ArmJSONResponse,
)
async def list_by_subscription(request: Request, subscriptionId: Subscription) -> Response:
    check_subscription(subscriptionId)
    found = await _read(request, lambda c: collection_ops.list_all(c, subscriptionId, None))
    return ArmJSONResponse(found)


@router.get(
    GROUP + COLLECTIONS,
    operation_id="JobCollections_ListByResourceGroup",
    responses=_ok("JobCollectionListResult", 200),
    response_class=ArmJSONResponse,
)
async def list_by_group(
    request: Request, subscriptionId: Subscription, resourceGroupName: Group
) -> Response:
    check_subscription(subscriptionId)
    check_resource_group(resourceGroupName)
    found = await _read(
        request, lambda c: collection_ops.list_all(c, subscriptionId, resourceGroupName)
    )
    return ArmJSONResponse(found)


@router.get(
    COLLECTION,
    operation_id="JobCollections_Get",
    responses=_ok("JobCollectionDefinition", 200),
    response_class=ArmJSONResponse,
)
async def get_collection(request: Request, name: Collection) -> Response:
    return ArmJSONResponse(await _read(request, lambda c: collection_ops.get(c, name)))


@router.put(
    COLLECTION,
    operation_id="JobCollections_CreateOrUpdate",
    openapi_extra=_body_doc("JobCollectionDefinition"),
    responses=_ok("JobCollectionDefinition", 200, 201),
    response_class=ArmJSONResponse,
)
async def put_collection(request: Request, name: Collection) -> Response:
    raw = await _body(request)
    settings = _settings(request)
    most = settings.max_collections_per_subscription
    mail = settings.smtp_url is not None
    status, body = await _write_due(
        request,
        lambda c: collection_ops.put(c, name, raw, _now(), max_collections=most, mail=mail),
    )
    return ArmJSONResponse(body, status_code=status)


@router.patch(
    COLLECTION,
    operation_id="JobCollections_Patch",
    openapi_extra=_body_doc("JobCollectionDefinition"),
    responses=_ok("JobCollectionDefinition", 200),
    response_class=ArmJSONResponse,
)
async def patch_collection(request: Request, name: Collection) -> Response:
    raw = await _body(request)
    mail = _settings(request).smtp_url is not None
    body = await _write_due(
        request, lambda c: collection_ops.patch(c, name, raw, _now(), mail=mail)
    )
    return ArmJSONResponse(body)


@router.delete(COLLECTION, operation_id="JobCollections_Delete", responses=_EMPTY)
async def delete_collection(request: Request, name: Collection) -> Response:
    await _store(request).write(lambda c: collection_ops.delete(c, name))
    return empty()


@router.post(COLLECTION + "/enable", operation_id="JobCollections_Enable", responses=_EMPTY)
async def enable_collection(request: Request, name: Collection) -> Response:
    await _write_due(
        request, lambda c: collection_ops.set_state(c, name, CollectionState.ENABLED, _now())
    )
    return empty()


@router.post(COLLECTION + "/disable", operation_id="JobCollections_Disable", responses=_EMPTY)
async def disable_collection(request: Request, name: Collection) -> Response:
    await _store(request).write(
        lambda c: collection_ops.set_state(c, name, CollectionState.DISABLED, _now())
    )
    return empty()


# -- jobs --------------------------------------------------------------------------------------


@router.get(
    COLLECTION + "/jobs",
    operation_id="Jobs_List",
    responses=_ok("JobListResult", 200),
    response_class=ArmJSONResponse,
)
async def list_jobs(
    request: Request,
    name: Collection,
    top: Top = None,
    skip: Skip = None,
    filter: Annotated[
        str | None, Query(alias="$filter", description="state eq Enabled|Disabled|…")
    ] = None,
    expand: Expand = None,
) -> Response:
    state = parse_filter(filter, "state", enums.JOB_STATES)
    offset = skip or 0
    style = style_for(request)
    value, more = await _read(
        request,
        lambda c: job_ops.list_page(
            c, name, state=state, limit=top or DEFAULT_PAGE, offset=offset, style=style
        ),
    )
    link = next_link(request, top=top, skip=offset, shown=len(value), more=more)
    return ArmJSONResponse({"value": value, "nextLink": link})


@router.get(
    JOB,
    operation_id="Jobs_Get",
    responses=_ok("JobDefinition", 200),
    response_class=ArmJSONResponse,
)
async def get_job(
    request: Request, name: Collection, jobName: JobPart, expand: Expand = None
) -> Response:
    style = style_for(request)
    return ArmJSONResponse(await _read(request, lambda c: job_ops.get(c, name, jobName, style)))


@router.put(
    JOB,
    operation_id="Jobs_CreateOrUpdate",
    openapi_extra=_body_doc("JobDefinition"),
    responses=_ok("JobDefinition", 200, 201),
    response_class=ArmJSONResponse,
)
async def put_job(request: Request, name: Collection, jobName: JobPart) -> Response:
    raw = await _body(request)
    style = style_for(request)
    status, body = await _write_due(
        request, lambda c: job_ops.put(c, name, jobName, raw, style, _now())
    )
    return ArmJSONResponse(body, status_code=status)


@router.patch(
    JOB,
    operation_id="Jobs_Patch",
    openapi_extra=_body_doc("JobDefinition"),
    responses=_ok("JobDefinition", 200),
    response_class=ArmJSONResponse,
)
async def patch_job(request: Request, name: Collection, jobName: JobPart) -> Response:
    raw = await _body(request)
    style = style_for(request)
    body = await _write_due(request, lambda c: job_ops.patch(c, name, jobName, raw, style, _now()))
    return ArmJSONResponse(body)


@router.delete(JOB, operation_id="Jobs_Delete", responses=_EMPTY)
async def delete_job(request: Request, name: Collection, jobName: JobPart) -> Response:
    await _store(request).write(lambda c: job_ops.delete(c, name, jobName))
    return empty()


@router.post(JOB + "/run", operation_id="Jobs_Run", responses=_EMPTY)
async def run_job(request: Request, name: Collection, jobName: JobPart) -> Response:
    await _write_due(request, lambda c: job_ops.run(c, name, jobName, _now()))
    return empty()


@router.post(
    JOB + "/backfill",
    operation_id="Jobs_Backfill",
    openapi_extra=_body_doc("BackfillRequest"),
    responses=_ok("BackfillResult", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def backfill_job(request: Request, name: Collection, jobName: JobPart) -> Response:
    """Run the job's executions whose times fall in [from, to), at most 1,000, each with its
    own expected time and execution tag (history messages start with `Backfill:`)."""
    raw = await _body(request)
    now = _now()
    result = await _write_due(request, lambda c: backfill_ops.backfill(c, name, jobName, raw, now))
    metrics.BACKFILL_QUEUED.inc(result["queued"])
    return ArmJSONResponse(result)


@router.get(
    JOB + "/history",
    operation_id="Jobs_ListJobHistory",
    responses=_ok("JobHistoryListResult", 200),
    response_class=ArmJSONResponse,
)
async def list_history(
    request: Request,
    name: Collection,
    jobName: JobPart,
    top: Top = None,
    skip: Skip = None,
    filter: Annotated[
        str | None,
        Query(alias="$filter", description="status eq Completed|Failed|Postponed|Skipped"),
    ] = None,
) -> Response:
    status = parse_filter(filter, "status", enums.HISTORY_STATUSES)
    offset = skip or 0
    value, more = await _read(
        request,
        lambda c: history_ops.list_page(
            c, name, jobName, status=status, limit=top or DEFAULT_PAGE, offset=offset
        ),
    )
    link = next_link(request, top=top, skip=offset, shown=len(value), more=more)
    return ArmJSONResponse({"value": value, "nextLink": link})


# -- beyond Azure: upcoming executions --------------------------------------------------------

Count = Annotated[int, Query(ge=1, le=1000, description="How many executions, 1..1000.")]
WindowStart = Annotated[  # `from` of the windows the timeline and the calendar preview list
    str | None, Query(alias="from", description="ISO 8601 (UTC without an offset); default: now.")
]


@router.get(
    JOB + "/upcoming",
    operation_id="Jobs_ListUpcoming",
    responses=_ok("UpcomingExecutionList", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def get_upcoming(
    request: Request, name: Collection, jobName: JobPart, count: Count = 10
) -> Response:
    """The stored job's next executions (UTC and wall clock, with daylight saving marks)."""
    now = _now()
    return ArmJSONResponse(
        await _read(request, lambda c: upcoming.for_job(c, name, jobName, count, now))
    )


@router.post(
    JOB + "/upcoming",
    operation_id="Jobs_PreviewUpcoming",
    openapi_extra=_body_doc("JobDefinition"),
    responses=_ok("UpcomingExecutionList", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def post_upcoming(
    request: Request, name: Collection, jobName: JobPart, count: Count = 10
) -> Response:
    """The next executions of a job definition that is not saved, as if it were created now."""
    raw = await _body(request)
    now = _now()
    return ArmJSONResponse(
        await _read(request, lambda c: upcoming.for_definition(c, name, jobName, raw, count, now))
    )


@router.get(
    COLLECTION + "/upcoming",
    operation_id="JobCollections_ListUpcoming",
    responses=_ok("CollectionUpcomingList", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def get_collection_upcoming(
    request: Request,
    name: Collection,
    start: WindowStart = None,
    end: Annotated[
        str | None,
        Query(alias="to", description="Exclusive; default: 24 hours after from; at most 7 days."),
    ] = None,
) -> Response:
    """The executions of every job of the collection from `from` to `to`, with daylight
    saving, calendar, jitter and pause marks (the dashboard's timeline)."""
    now = _now()
    first, last = collection_upcoming.read_window(start, end, now)
    return ArmJSONResponse(
        await _read(
            request, lambda c: collection_upcoming.for_collection(c, name, first, last, now)
        )
    )


# -- beyond Azure: exclusion calendars (docs/recurrence.md §8) --------------------------------

CalendarPart = Annotated[str, Path(description="The calendar name.")]
MAX_CALENDAR_BYTES = 4 * 1024 * 1024  # an ical document of 1 MB, escaped in JSON


@router.get(
    COLLECTION + "/calendars",
    operation_id="Calendars_List",
    responses=_ok("CalendarListResult", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def list_calendars(request: Request, name: Collection) -> Response:
    """The collection's exclusion calendars, by name."""
    return ArmJSONResponse(await _read(request, lambda c: calendar_ops.list_all(c, name)))


@router.get(
    CALENDAR,
    operation_id="Calendars_Get",
    responses=_ok("CalendarDefinition", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def get_calendar(request: Request, name: Collection, calendarName: CalendarPart) -> Response:
    return ArmJSONResponse(await _read(request, lambda c: calendar_ops.get(c, name, calendarName)))


@router.put(
    CALENDAR,
    operation_id="Calendars_CreateOrUpdate",
    openapi_extra=_body_doc("CalendarDefinition"),
    responses=_ok("CalendarDefinition", 200, 201),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def put_calendar(request: Request, name: Collection, calendarName: CalendarPart) -> Response:
    """Create or replace a calendar; the jobs that list it are scheduled again."""
    raw = await _body(request, MAX_CALENDAR_BYTES)
    status, body = await _write_due(
        request, lambda c: calendar_ops.put(c, name, calendarName, raw, _now())
    )
    return ArmJSONResponse(body, status_code=status)


@router.delete(
    CALENDAR, operation_id="Calendars_Delete", responses=_EMPTY, tags=["Horarium extensions"]
)
async def delete_calendar(
    request: Request, name: Collection, calendarName: CalendarPart
) -> Response:
    """Delete a calendar (409 while a job lists it)."""
    await _store(request).write(lambda c: calendar_ops.delete(c, name, calendarName))
    return empty()


TimeZone = Annotated[
    str | None,
    Query(
        alias="timeZone",
        description="The zone the days are read in (IANA or Windows name); default UTC.",
    ),
]


@router.get(
    CALENDAR + "/excludedDates",
    operation_id="Calendars_ListExcludedDates",
    responses=_ok("CalendarExcludedDates", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def get_excluded_dates(
    request: Request,
    name: Collection,
    calendarName: CalendarPart,
    start: Annotated[
        str | None, Query(alias="from", description="YYYY-MM-DD; default: today in timeZone.")
    ] = None,
    end: Annotated[
        str | None,
        Query(
            alias="to",
            description="YYYY-MM-DD, exclusive; default: 92 days after from;"
            " at most 366 days after it.",
        ),
    ] = None,
    zone: TimeZone = None,
) -> Response:
    """The days the calendar excludes in a window (whole or in part), and why."""
    where = calendar_preview.read_zone(zone)
    first, last = calendar_preview.read_days(start, end, where, _now())
    return ArmJSONResponse(
        await _read(
            request,
            lambda c: calendar_preview.excluded_dates(c, name, calendarName, first, last, where),
        )
    )


@router.post(
    CALENDAR + "/upcoming",
    operation_id="Calendars_PreviewUpcoming",
    openapi_extra=_body_doc("CalendarDefinition"),
    responses=_ok("CalendarPreview", 200),
    response_class=ArmJSONResponse,
    tags=["Horarium extensions"],
)
async def post_calendar_upcoming(
    request: Request,
    name: Collection,
    calendarName: CalendarPart,
    start: WindowStart = None,
    end: Annotated[
        str | None,
        Query(alias="to", description="Exclusive; default: 31 days after from; at most 92 days."),
    ] = None,
    zone: TimeZone = None,
) -> Response:
    """A calendar body that is not saved: the days it excludes, and the executions it would
    skip or move for the collection's jobs that list the calendar (against the stored one)."""
    raw = await _body(request, MAX_CALENDAR_BYTES)
    where = calendar_preview.read_zone(zone)
    now = _now()
    first, last = calendar_preview.read_preview_window(start, end, now)
    return ArmJSONResponse(
        await _read(
            request,
            lambda c: calendar_preview.preview(c, name, calendarName, raw, first, last, where, now),
        )
    )
