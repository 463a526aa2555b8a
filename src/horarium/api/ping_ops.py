"""A check-in (`/ping/{token}…`), one write transaction: the monitor is found by its token's
SHA-256 (one index lookup, so an unknown token costs what a known one does and tells nothing of
how close it came), the check-in is recorded with its body, and the monitor's status moves
(`model.monitor_status.checked_in`), its notification written in the same transaction.

The transaction is one blocking function (`record`) run on the store's writer
(`store.runs.transact.Transactor`): on SQLite one hop from the event loop to the writer's thread
and back, whatever the statements. A monitor that lists exclusion calendars has its next
expected instant computed in the offload pool (`api.offload`), not on the writer: `record` then
writes nothing and names what to compute, and runs again with the answer, which it uses only if
the monitor's schedule is still the one it was computed for."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from horarium.api import evaluation
from horarium.api.offload import evaluate
from horarium.model.errors import NotFound
from horarium.model.monitor import CheckInKind
from horarium.model.monitor_status import checked_in, watch_of
from horarium.model.names import CollectionName
from horarium.model.schedule import lists_calendars
from horarium.store.core import monitor_events
from horarium.store.resources import monitors
from horarium.store.runs.transact import Transactor

MAX_BODY = 10 * 1024  # bytes of a check-in's body kept (as UTF-8 text)
OFFLOADED_TRIES = 3  # runs of `record` with an answer from the pool before it computes its own


def unknown() -> NotFound:
    return NotFound("No monitor has this ping token.", code="NotFound")


@dataclass(frozen=True)
class Schedule:
    """A monitor's schedule, as `evaluation.expected_after` takes it."""

    definition: dict[str, Any]
    schedule_set_at: datetime


@dataclass(frozen=True)
class Following:
    """The first expected instant after the check-in, computed for `schedule`."""

    schedule: Schedule
    at: datetime | None


@dataclass(frozen=True)
class CheckIn:
    token_sha256: str
    kind: CheckInKind
    exit_code: int | None
    body: str
    now: datetime


async def check_in(transactor: Transactor, check: CheckIn) -> None:
    """Record `check` (NotFound: no monitor has the token)."""
    known: Following | None = None
    for tries in range(OFFLOADED_TRIES + 1):
        inline = tries == OFFLOADED_TRIES  # the schedule kept changing: compute it on the writer
        work = functools.partial(record, check=check, known=known, inline=inline)
        wanted = await transactor.write(work, "check-in")
        if wanted is None:
            return
        at = await evaluate(
            True, evaluation.expected_after, wanted.definition, wanted.schedule_set_at, check.now
        )
        known = Following(wanted, at)


def record(
    conn: Connection, check: CheckIn, known: Following | None, *, inline: bool = False
) -> Schedule | None:
    """The check-in's transaction. Returns None when it was recorded; a `Schedule` when its
    next expected instant is to be computed off the writer first (nothing was written)."""
    lookup = monitors.by_token_statement(conn.dialect.name)
    found = monitors.pinged(conn.execute(lookup, {"token_sha256": check.token_sha256}).first())
    if found is None:
        raise unknown()
    monitor = found.monitor
    now = check.now
    following: datetime | None = None
    if monitor.state == "Enabled":
        schedule = Schedule(monitor.definition, monitor.schedule_set_at)
        if known is not None and known.schedule == schedule:
            following = known.at
        elif lists_calendars(monitor.definition) and not inline:
            return schedule
        else:
            following = evaluation.expected_after(monitor.definition, monitor.schedule_set_at, now)
    conn.execute(
        monitors.CHECK_IN,
        {
            "monitor_id": monitor.id,
            "kind": check.kind,
            "exit_code": check.exit_code,
            "received_at": now,
            "body": check.body,
        },
    )
    if monitor.state != "Enabled":  # Paused: recorded, nothing else
        paused = {"monitor_id": monitor.id, "updated_at": now, "last_check_in_at": now}
        conn.execute(monitors.CHECKED_IN, paused)
        return None
    definition = monitor.definition
    watch = watch_of(
        definition,
        status=monitor.status,
        expected_at=monitor.expected_at,
        started_at=monitor.started_at,
    )
    message = f"a check-in reported exit code {check.exit_code}" if check.exit_code else ""
    verdict = checked_in(watch, check.kind, now, following, message)
    after = verdict.watch
    conn.execute(
        monitors.CHECKED_IN,
        {
            "monitor_id": monitor.id,
            "updated_at": now,
            "status": after.status,
            "expected_at": after.expected_at,
            "started_at": after.started_at,
            "last_check_in_at": now,
            "due_at": verdict.due_at,
        },
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
        rows = monitor_events.rows_of([change], now)
        if rows:
            conn.execute(monitor_events.INSERT, rows)
    return None
