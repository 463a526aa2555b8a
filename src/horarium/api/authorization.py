"""What a caller may do: a key reaches only its subscriptions, and a reader only reads.

A FastAPI dependency of the router (`authorize`), so it sees the matched route and its path
parameters: each route's operation maps to its ARM action and whether it writes (`ACTIONS`); an
operation missing from the map is refused. A refusal is ARM's 403 `AuthorizationFailed`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from fastapi import Request

from horarium.api.principal import ALL_SUBSCRIPTIONS, Principal
from horarium.model.errors import ApiError
from horarium.model.names import PROVIDER


class Access(StrEnum):
    READ = "read"  # GET, list, preview: readers and contributors
    WRITE = "write"  # create, change, delete, enable, disable, run: contributors


@dataclass(frozen=True)
class Action:
    name: str  # the ARM action, after "Microsoft.Scheduler/"
    access: Access
    every_subscription: bool = False  # spans tenants: only for callers that reach all of them


_COLLECTIONS = "jobCollections"
_JOBS = "jobCollections/jobs"
_CALENDARS = "jobCollections/calendars"
_MONITORS = "jobCollections/monitors"

# Every operation of horarium.api.routes (its operation_id) and the action it performs.
ACTIONS: dict[str, Action] = {
    "JobCollections_ListBySubscription": Action(f"{_COLLECTIONS}/read", Access.READ),
    "JobCollections_ListByResourceGroup": Action(f"{_COLLECTIONS}/read", Access.READ),
    "JobCollections_Get": Action(f"{_COLLECTIONS}/read", Access.READ),
    "JobCollections_CreateOrUpdate": Action(f"{_COLLECTIONS}/write", Access.WRITE),
    "JobCollections_Patch": Action(f"{_COLLECTIONS}/write", Access.WRITE),
    "JobCollections_Delete": Action(f"{_COLLECTIONS}/delete", Access.WRITE),
    "JobCollections_Enable": Action(f"{_COLLECTIONS}/enable/action", Access.WRITE),
    "JobCollections_Disable": Action(f"{_COLLECTIONS}/disable/action", Access.WRITE),
    "JobCollections_ListUpcoming": Action(f"{_COLLECTIONS}/upcoming/read", Access.READ),
    "Jobs_List": Action(f"{_JOBS}/read", Access.READ),
    "Jobs_Get": Action(f"{_JOBS}/read", Access.READ),
    "Jobs_CreateOrUpdate": Action(f"{_JOBS}/write", Access.WRITE),
    "Jobs_Patch": Action(f"{_JOBS}/write", Access.WRITE),
    "Jobs_Delete": Action(f"{_JOBS}/delete", Access.WRITE),
    "Jobs_Run": Action(f"{_JOBS}/run/action", Access.WRITE),
    "Jobs_Backfill": Action(f"{_JOBS}/backfill/action", Access.WRITE),  # Horarium
    "Jobs_ListJobHistory": Action(f"{_JOBS}/history/read", Access.READ),
    "Jobs_ListUpcoming": Action(f"{_JOBS}/upcoming/read", Access.READ),
    "Jobs_PreviewUpcoming": Action(f"{_JOBS}/upcoming/action", Access.READ),
    # Horarium's exclusion calendars
    "Calendars_List": Action(f"{_CALENDARS}/read", Access.READ),
    "Calendars_Get": Action(f"{_CALENDARS}/read", Access.READ),
    "Calendars_CreateOrUpdate": Action(f"{_CALENDARS}/write", Access.WRITE),
    "Calendars_Delete": Action(f"{_CALENDARS}/delete", Access.WRITE),
    "Calendars_ListExcludedDates": Action(f"{_CALENDARS}/read", Access.READ),
    "Calendars_PreviewUpcoming": Action(f"{_CALENDARS}/upcoming/action", Access.READ),
    # Horarium's check-in monitors (the check-ins themselves need no caller: api.ping_routes)
    "Monitors_List": Action(f"{_MONITORS}/read", Access.READ),
    "Monitors_Get": Action(f"{_MONITORS}/read", Access.READ),
    "Monitors_CreateOrUpdate": Action(f"{_MONITORS}/write", Access.WRITE),
    "Monitors_Delete": Action(f"{_MONITORS}/delete", Access.WRITE),
    "Monitors_RegeneratePingUrl": Action(f"{_MONITORS}/regeneratePingUrl/action", Access.WRITE),
    "Monitors_ListCheckIns": Action(f"{_MONITORS}/checkIns/read", Access.READ),
    "Monitors_ListUpcoming": Action(f"{_MONITORS}/upcoming/read", Access.READ),
    # Horarium's dashboard extensions (horarium.api.dashboard_routes)
    "Failures_List": Action(f"{_JOBS}/history/read", Access.READ),
    "JobCollections_ListOutcomes": Action(f"{_JOBS}/history/read", Access.READ),
    "Engine_Get": Action("engine/read", Access.READ, every_subscription=True),
}


class Forbidden(ApiError):
    status = 403
    code = "AuthorizationFailed"


def allowed(principal: Principal, action: Action, subscription: str) -> bool:
    if action.every_subscription:
        if ALL_SUBSCRIPTIONS not in principal.subscriptions:
            return False
    elif not principal.reaches(subscription):
        return False
    return action.access is Access.READ or principal.may_write


async def authorize(request: Request) -> None:
    """Refuse (403) a request its caller may not make."""
    principal: Principal | None = getattr(request.state, "principal", None)
    route = request.scope.get("route")
    action = ACTIONS.get(getattr(route, "operation_id", None) or "")
    subscription = request.path_params.get("subscriptionId", "")
    if principal is None or action is None:
        raise Forbidden("The request has no authenticated caller or no known action.")
    if not allowed(principal, action, subscription):
        raise Forbidden(
            f"The client '{principal.name}' (role {principal.role.value}) does not have"
            f" authorization to perform action '{PROVIDER}/{action.name}' over scope"
            f" '{_scope(request.path_params)}' or the scope is invalid."
        )


def _scope(params: dict[str, str]) -> str:
    """The ARM id of the resource (or the subscription, or the resource group) acted on; `/`
    for an action on the whole service."""
    if "subscriptionId" not in params:
        return "/"
    scope = f"/subscriptions/{params['subscriptionId']}"
    if "resourceGroupName" in params:
        scope += f"/resourceGroups/{params['resourceGroupName']}"
    if "jobCollectionName" in params:
        scope += f"/providers/{PROVIDER}/jobCollections/{params['jobCollectionName']}"
    if "jobName" in params:
        scope += f"/jobs/{params['jobName']}"
    if "calendarName" in params:
        scope += f"/calendars/{params['calendarName']}"
    if "monitorName" in params:
        scope += f"/monitors/{params['monitorName']}"
    return scope
