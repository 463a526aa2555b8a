"""Beyond Azure: the newest outcomes of every job of a collection in one read, for the
dashboard's jobs list (a strip per job) instead of one history request per job. Bounded: at
most MAX_COUNT entries per job (a collection holds at most 1,000 jobs), messages cut to
MESSAGE_CHARS."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api.collection_ops import require as require_collection
from horarium.model.history import HistoryEntry, render_history
from horarium.model.names import CollectionName
from horarium.store.resources import history

DEFAULT_COUNT = 10
MAX_COUNT = 20
MESSAGE_CHARS = 300


def _cut(entry: HistoryEntry) -> HistoryEntry:
    if len(entry.message) <= MESSAGE_CHARS:
        return entry
    return dataclasses.replace(entry, message=entry.message[: MESSAGE_CHARS - 1] + "…")


async def list_all(conn: AsyncConnection, name: CollectionName, count: int) -> dict[str, Any]:
    """`{"value": [{"name": "<collection>/<job>", "outcomes": [history entry, …]}]}`, jobs by
    name, each job's entries newest first (as its history lists them)."""
    collection = await require_collection(conn, name)
    found = await history.latest_per_job(conn, collection.id, count)
    value = []
    for job in found:
        job_id = f"{collection.names.arm_id}/jobs/{job.job}"
        full_name = f"{collection.name}/{job.job}"
        outcomes = [render_history(job_id, full_name, _cut(e)) for e in job.entries]
        value.append({"id": job_id, "name": full_name, "outcomes": outcomes})
    return {"value": value}
