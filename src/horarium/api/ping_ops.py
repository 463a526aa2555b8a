"""A check-in (`/ping/{token}…`), inside the caller's write transaction: the monitor is found by
its token's SHA-256 (one index lookup, so an unknown token costs what a known one does and tells
nothing of how close it came), the check-in is recorded with its body, and the monitor's status
moves (`model.monitor_status.checked_in`), its notification written in the same transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.api import evaluation
from horarium.api.offload import evaluate
from horarium.model.errors import NotFound
from horarium.model.monitor import CheckInKind
from horarium.model.monitor_status import checked_in, watch_of
from horarium.model.names import CollectionName
from horarium.model.schedule import lists_calendars
from horarium.store.core import monitor_events
from horarium.store.resources import monitors

MAX_BODY = 10 * 1024  # bytes of a check-in's body kept (as UTF-8 text)


def unknown() -> NotFound:
    return NotFound("No monitor has this ping token.", code="NotFound")


async def check_in(
    conn: AsyncConnection,
    token_sha256: str,
    kind: CheckInKind,
    exit_code: int | None,
    body: str,
    now: datetime,
) -> None:
    found = await monitors.by_token(conn, token_sha256)
    if found is None:
        raise unknown()
    monitor = found.monitor
    await monitors.add_check_in(conn, monitor.id, kind=kind, exit_code=exit_code, at=now, body=body)
    if monitor.state != "Enabled":  # Paused: recorded, nothing else
        await monitors.update_one(conn, monitor.id, now, last_check_in_at=now)
        return
    definition = monitor.definition
    following = await evaluate(
        lists_calendars(definition),
        evaluation.expected_after,
        definition,
        monitor.schedule_set_at,
        now,
    )
    watch = watch_of(
        definition,
        status=monitor.status,
        expected_at=monitor.expected_at,
        started_at=monitor.started_at,
    )
    message = f"a check-in reported exit code {exit_code}" if exit_code else ""
    verdict = checked_in(watch, kind, now, following, message)
    after = verdict.watch
    await monitors.update_one(
        conn,
        monitor.id,
        now,
        status=after.status,
        expected_at=after.expected_at,
        started_at=after.started_at,
        last_check_in_at=now,
        due_at=verdict.due_at,
    )
    if verdict.event is not None:
        change = monitor_events.MonitorChange(
            event=verdict.event,
            collection_id=monitor.collection_id,
            collection=CollectionName(
                found.subscription_id, found.resource_group, found.collection
            ),
            notify_events=found.notify_events,
            monitor=monitor.name,
            status=after.status,
            previous=monitor.status,
            reason=verdict.reason,
            expected_at=monitor.expected_at,
            last_check_in_at=now,
        )
        await monitor_events.write(conn, [change], now)
