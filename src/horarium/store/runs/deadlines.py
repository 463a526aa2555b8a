"""The engine's side of `executionPolicy.deadlines` (`schema.job_deadlines`, one row per job that
has deadlines): the claim marks when an execution starts (`started`), and the periodic look
(`judge_due`) raises ExecutionLate and ExecutionOverran, each written to the outbox in the
transaction that marks it raised.

An execution *starts* when a process claims it to run (its first attempt: the claim leases the
job row and marks the start in the same transaction). A takeover's claim of the same execution
keeps the first mark, so `finishWithin` counts from the first attempt's start, retries and the
error action included.

Any process of a cluster may look, and one raises each event: the rows are chosen `FOR UPDATE
SKIP LOCKED` on PostgreSQL, and every mark is a conditional UPDATE (on the execution it names,
or on the `due_at` that was read), so an event is written, and notified, once — also when a node
stops between two passes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, insert, or_, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from horarium.model.datetimes import format_instant
from horarium.model.enums import JobState
from horarium.model.execution_policy import Deadlines, render_deadlines
from horarium.model.notifications import BITS, EXECUTION_LATE, EXECUTION_OVERRAN
from horarium.store.core.db import write_transaction
from horarium.store.core.schema import (
    job_collections,
    job_deadlines,
    job_executions,
    job_history,
    jobs,
    notifications,
)
from horarium.store.runs.notices import event_row
from horarium.store.runs.statements import JOB_INFO
from horarium.store.runs.vocabulary import Claimed, ExecutionKind, JobInfo

BATCH = 200  # jobs judged per transaction

_d = job_deadlines.c
_SERIES = (ExecutionKind.SCHEDULED, ExecutionKind.LAST, ExecutionKind.ONCE)


def _other(column: Any, expected: Any) -> Any:
    """`column IS DISTINCT FROM expected` (portable)."""
    return or_(column.is_(None), column != expected)


# -- the claim's ---------------------------------------------------------------------------------


def started(conn: Connection, claimed: Sequence[Claimed], now: datetime) -> None:
    """Mark the start of the claimed first attempts of jobs with deadlines (not again for an
    execution already marked), and when the look must judge it: at once when it started past
    `startWithin`, else `finishWithin` after its start."""
    for execution in claimed:
        deadlines = execution.job.policy.deadlines
        if not deadlines:
            continue
        expected = execution.expected
        late = deadlines.start_within is not None and now > expected + deadlines.start_within
        finish = deadlines.finish_within
        due = now if late else (now + finish if finish is not None else None)
        conn.execute(
            update(job_deadlines)
            .where(_d.job_id == execution.job.id, _other(_d.started_for, expected))
            .values(started_for=expected, started_at=now, due_at=due)
        )


# -- the look's ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raised:
    """The events one pass raised (whether or not the collection notifies them)."""

    late: int = 0
    overran: int = 0

    def __add__(self, other: Raised) -> Raised:
        return Raised(self.late + other.late, self.overran + other.overran)


async def anything_due(db: AsyncEngine, now: datetime) -> bool:
    """Whether a pass may have something to judge (reads only, no write lock): a job with
    deadlines whose due execution has not started, or a started one at its `due_at`."""
    due = exists().where(_d.due_at <= now)
    unstarted = _unstarted(select(_d.job_id).select_from(job_deadlines), now).exists()
    async with db.connect() as conn:
        return bool((await conn.execute(select(or_(due, unstarted)))).scalar())


def _unstarted(query: Any, now: datetime) -> Any:
    """`query` (over job_deadlines) narrowed to jobs whose next execution is due by `now` and
    has neither started nor been found late."""
    return query.join(jobs, jobs.c.id == _d.job_id).where(
        jobs.c.next_execution_at <= now,
        jobs.c.state == JobState.ENABLED,
        _other(_d.started_for, jobs.c.next_execution_at),
        _other(_d.late_for, jobs.c.next_execution_at),
    )


async def judge_due(db: AsyncEngine, now: datetime) -> Raised:
    """Raise the events due by `now`: executions not started `startWithin` after their expected
    time, started executions judged at their `due_at`."""
    raised = Raised()
    after: int | None = 0
    while after is not None:
        async with write_transaction(db) as conn:
            after, more = await _judge_unstarted(conn, now, after)
        raised += more
    while True:
        async with write_transaction(db) as conn:
            seen, more = await _judge_started(conn, now)
        raised += more
        if seen < BATCH:
            return raised


def _locked(query: Any, conn: AsyncConnection) -> Any:
    if conn.dialect.name == "sqlite":
        return query
    return query.with_for_update(skip_locked=True, of=job_deadlines)


def _joined(query: Any) -> Any:
    """`query` over job_deadlines joined with jobs and their collections (for JOB_INFO)."""
    return query.join(job_collections, job_collections.c.id == jobs.c.collection_id)


async def _judge_unstarted(
    conn: AsyncConnection, now: datetime, after: int
) -> tuple[int | None, Raised]:
    """Jobs after job id `after` whose next execution is due and not started (not claimed: a
    paused collection, a collection without free slots, no engine running); the last job id
    looked at (None: the last batch)."""
    columns = select(*JOB_INFO, jobs.c.next_execution_at, jobs.c.next_repeat)
    query = _joined(_unstarted(columns.select_from(job_deadlines), now))
    query = query.where(_d.job_id > after)
    query = query.order_by(_d.job_id).limit(BATCH)
    rows = (await conn.execute(_locked(query, conn))).all()
    events: list[tuple[JobInfo, dict[str, Any]]] = []
    for row in rows:
        info = _info(row)
        within = info.policy.deadlines.start_within
        expected = row.next_execution_at
        if within is None or expected + within > now:
            continue
        done = await conn.execute(
            update(job_deadlines)
            .where(_d.job_id == info.id, _other(_d.late_for, expected))
            .values(late_for=expected)
        )
        if done.rowcount == 1:
            events.append((info, _late(info, now, expected, None, row.next_repeat)))
    last = rows[-1].id if len(rows) == BATCH else None
    return last, await _write(conn, events)


async def _judge_started(conn: AsyncConnection, now: datetime) -> tuple[int, Raised]:
    """Started executions at their `due_at`: a late start, and `finishWithin` after it."""
    columns = select(
        *JOB_INFO, _d.started_for, _d.started_at, _d.late_for, _d.overran_for, _d.due_at
    )
    query = _joined(columns.select_from(job_deadlines).join(jobs, jobs.c.id == _d.job_id))
    query = query.where(_d.due_at <= now).order_by(_d.due_at).limit(BATCH)
    rows = (await conn.execute(_locked(query, conn))).all()
    events: list[tuple[JobInfo, dict[str, Any]]] = []
    for row in rows:
        info = _info(row)
        deadlines = info.policy.deadlines
        expected, start = row.started_for, row.started_at
        late_for, overran_for, due = row.late_for, row.overran_for, None
        new: list[tuple[JobInfo, dict[str, Any]]] = []
        if _started_late(deadlines, expected, start) and late_for != expected:
            late_for = expected
            new.append((info, _late(info, now, expected, start, None)))
        if deadlines.finish_within is not None and overran_for != expected:
            overrun = start + deadlines.finish_within
            if overrun > now:
                due = overrun
            elif await _overran(conn, info.id, expected, overrun):
                overran_for = expected
                new.append((info, _overran_event(info, now, expected, start, deadlines)))
        done = await conn.execute(
            update(job_deadlines)
            .where(_d.job_id == info.id, _d.due_at == row.due_at)
            .values(late_for=late_for, overran_for=overran_for, due_at=due)
        )
        if done.rowcount == 1:
            events += new
    return len(rows), await _write(conn, events)


def _started_late(deadlines: Deadlines, expected: datetime, start: datetime) -> bool:
    within = deadlines.start_within
    return within is not None and start > expected + within


async def _overran(conn: AsyncConnection, job_id: int, expected: datetime, by: datetime) -> bool:
    """Whether the job's execution expected at `expected` was unfinished at `by`: its first
    attempt still held on the job row, a retry or the error action still to come, or its last
    attempt recorded as ending after `by`."""
    running = select(jobs.c.id).where(jobs.c.id == job_id, jobs.c.next_execution_at == expected)
    pending = exists().where(
        job_executions.c.job_id == job_id,
        job_executions.c.expected_at == expected,
        job_executions.c.kind.in_(_SERIES),
    )
    ended_late = exists().where(
        and_(
            job_history.c.job_id == job_id,
            job_history.c.expected_execution_time == expected,
            job_history.c.execution_tag.is_not(None),
            job_history.c.end_time > by,
        )
    )
    query = select(or_(exists(running), pending, ended_late))
    return bool((await conn.execute(query)).scalar())


def _info(row: Any) -> JobInfo:
    return JobInfo(*row[: len(JOB_INFO)])


def _late(
    info: JobInfo, now: datetime, expected: datetime, start: datetime | None, repeat: int | None
) -> dict[str, Any]:
    execution: dict[str, Any] = {"expectedExecutionTime": format_instant(expected)}
    if repeat is not None:
        execution["repeatCount"] = repeat
    execution["startTime"] = format_instant(start) if start is not None else None
    return event_row(
        EXECUTION_LATE,
        info,
        now,
        deadlines=render_deadlines(info.policy.deadlines),
        execution=execution,
    )


def _overran_event(
    info: JobInfo, now: datetime, expected: datetime, start: datetime, deadlines: Deadlines
) -> dict[str, Any]:
    execution = {
        "expectedExecutionTime": format_instant(expected),
        "startTime": format_instant(start),
    }
    return event_row(
        EXECUTION_OVERRAN, info, now, deadlines=render_deadlines(deadlines), execution=execution
    )


async def _write(conn: AsyncConnection, events: list[tuple[JobInfo, dict[str, Any]]]) -> Raised:
    """The events' outbox rows, for the collections that notify them; what was raised."""
    notified = [row for info, row in events if info.notify & BITS[row["event"]]]
    if notified:
        await conn.execute(insert(notifications), notified)
    late = sum(1 for _, row in events if row["event"] == EXECUTION_LATE)
    return Raised(late, len(events) - late)
