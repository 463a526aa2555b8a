"""Job history: read what the engine recorded, newest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import job_ops
from horarium.api.collection_ops import require as require_collection
from horarium.model.history import render_history
from horarium.model.names import CollectionName
from horarium.store.resources import history


async def list_page(
    conn: AsyncConnection,
    name: CollectionName,
    job_name: str,
    *,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[list[dict[str, Any]], bool]:
    collection = await require_collection(conn, name)
    job = await job_ops.require(conn, collection, job_name)
    found = await history.page(conn, job.id, status=status, limit=limit + 1, offset=offset)
    arm_id = f"{collection.names.arm_id}/jobs/{job.name}"
    full_name = f"{collection.name}/{job.name}"
    return [render_history(arm_id, full_name, e) for e in found[:limit]], len(found) > limit
