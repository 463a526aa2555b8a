"""Beyond Azure: a subscription's recent Failed, Postponed and Skipped history entries, across
its collections, newest first, each with its job's id and state (a Faulted job shows there) and,
for a Failed attempt, whether it was the last its retry policy allows (`finalAttempt`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.model.actions import allowed_retries
from horarium.model.enums import HistoryStatus
from horarium.model.history import render_history
from horarium.model.names import CollectionName
from horarium.store.resources import history
from horarium.store.resources.history import SubscriptionEntry

FAILURE_STATUSES = (HistoryStatus.FAILED, HistoryStatus.POSTPONED, HistoryStatus.SKIPPED)


async def list_page(
    conn: AsyncConnection, subscription: str, *, status: str | None, limit: int, offset: int
) -> tuple[list[dict[str, Any]], bool]:
    """One page of entries, and whether another page follows."""
    statuses = (status,) if status is not None else FAILURE_STATUSES
    found = await history.subscription_page(
        conn, subscription, statuses, limit=limit + 1, offset=offset
    )
    return [_render(found) for found in found[:limit]], len(found) > limit


def _render(found: SubscriptionEntry) -> dict[str, Any]:
    names = CollectionName(found.subscription_id, found.resource_group, found.collection)
    job_id = f"{names.arm_id}/jobs/{found.job}"
    rendered = render_history(job_id, f"{found.collection}/{found.job}", found.entry)
    rendered["properties"]["jobId"] = job_id
    rendered["properties"]["jobState"] = found.job_state
    if found.entry.status == HistoryStatus.FAILED:
        rendered["properties"]["finalAttempt"] = _final(found)
    return rendered


def _final(found: SubscriptionEntry) -> bool:
    """Whether a Failed attempt was its action's last under the job's retry policy now: for
    the main action, the execution faulted; no retry follows either way."""
    action = found.job_definition.get("action") or {}
    if found.entry.action_name == "ErrorAction":
        action = action.get("errorAction") or {}
    return found.entry.retry_count >= allowed_retries(action.get("retryPolicy"))
