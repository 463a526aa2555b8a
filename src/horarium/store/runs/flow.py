"""The store's side of `executionPolicy` (Horarium), in the claim's transaction so that it holds
across the processes of a cluster: whether a due job's previous execution is unfinished, what a
due execution that is not run leaves behind (Skipped history, a queued execution, the job's
series moved on), and the queued executions (buffered, backfill) of jobs whose executions must
not overlap, run one at a time, oldest first.

An execution is unfinished while it has a `job_executions` row that has started (leased, or an
attempt after the first, or its error action) or its first attempt is leased on the job row. A
queued execution is a row not started yet (attempt 0 of the main action, no lease). On
PostgreSQL the job row serializes these decisions: a claim of due jobs holds it
(`FOR UPDATE SKIP LOCKED`), and queued rows are run only under it (taken `SKIP LOCKED` too: a
job row held elsewhere means the rows wait)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Boolean, and_, bindparam, case, delete, insert, or_, select, update
from sqlalchemy.engine import Connection

from horarium.model.enums import HistoryStatus, JobState
from horarium.store.core.schema import job_executions, job_history, jobs
from horarium.store.core.tags import series_tag
from horarium.store.runs import notices
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.id_lists import in_ids
from horarium.store.runs.vocabulary import (
    Claimed,
    ExecutionKind,
    JobInfo,
    Outcome,
    Phase,
    RunExecution,
)

# A queued execution waiting for the previous one looks again after this long; the end of an
# execution wakes it at once (`wake_queued`), this is the safety net.
RECHECK = timedelta(seconds=30)

_NOW = bindparam("now", type_=job_executions.c.due_at.type)
_e = job_executions.c

STARTED = or_(_e.lease_owner.is_not(None), _e.attempt > 0, _e.phase != Phase.MAIN)
QUEUED = and_(
    _e.lease_owner.is_(None),
    _e.attempt == 0,
    _e.phase == Phase.MAIN,
    _e.kind != ExecutionKind.RUN_NOW,
)


class FlowStatements:
    """The statements of this module, for one database."""

    def __init__(self, dialect: RunDialect) -> None:
        self.executions_of = select(
            _e.id, _e.job_id, _e.kind, _e.expected_at, _e.lease_owner, _e.attempt, _e.phase
        ).where(in_ids(_e.job_id), _e.kind != ExecutionKind.RUN_NOW)
        self.take_jobs = dialect.lock(
            select(jobs.c.id, jobs.c.lease_owner).where(in_ids(jobs.c.id)), skip_locked=True
        )
        self.park = (
            update(job_executions)
            .where(in_ids(_e.id))
            .values(lease_owner=None, due_at=bindparam("until", type_=_e.due_at.type))
        )
        self.wake = (
            update(job_executions)
            .where(in_ids(_e.job_id), QUEUED, _e.due_at > _NOW)
            .values(due_at=_NOW)
        )
        ends = bindparam("ends", type_=Boolean())
        self.pass_job = (
            update(jobs)
            .where(jobs.c.id == bindparam("job"))
            .values(
                next_execution_at=bindparam("next_at", type_=jobs.c.next_execution_at.type),
                next_repeat=bindparam("following"),
                state=case(
                    (and_(ends, jobs.c.state == JobState.ENABLED), JobState.COMPLETED),
                    else_=jobs.c.state,
                ),
                ended_at=case(
                    (and_(ends, jobs.c.state == JobState.ENABLED), _NOW), else_=jobs.c.ended_at
                ),
            )
        )
        self.drop = delete(job_executions).where(in_ids(_e.id))


def serial_jobs(infos: Sequence[JobInfo]) -> list[int]:
    """The ids of the jobs among `infos` whose executions must not overlap."""
    return sorted({info.id for info in infos if info.policy.serial})


def previous_executions(
    conn: Connection, sql: FlowStatements, job_ids: list[int]
) -> dict[int, tuple[datetime | None, bool]]:
    """For each job: the expected time of its latest unfinished execution (None: none), and
    whether a buffered execution (not backfill) already waits."""
    found: dict[int, tuple[datetime | None, bool]] = {}
    for row in conn.execute(sql.executions_of, {"ids": job_ids}):
        previous, buffered = found.get(row.job_id, (None, False))
        if _started(row):
            previous = max(previous or row.expected_at, row.expected_at)
        elif row.kind != ExecutionKind.BACKFILL:
            buffered = True
        found[row.job_id] = (previous, buffered)
    return found


def _started(row: Any) -> bool:
    return row.lease_owner is not None or row.attempt > 0 or row.phase != Phase.MAIN


def settle(
    conn: Connection, sql: FlowStatements, decisions: list[RunExecution], now: datetime
) -> None:
    """Due executions that are not run: Skipped history, buffered rows, the series moved on."""
    if not decisions:
        return
    skipped = [d for d in decisions if d.outcome is Outcome.SKIP]
    if skipped:
        conn.execute(insert(job_history), [_skipped_entry(d, now) for d in skipped])
        notices.skipped(conn, skipped, now)
    buffered = [d for d in decisions if d.outcome is Outcome.BUFFER]
    if buffered:
        conn.execute(insert(job_executions), [_queued_row(d, now) for d in buffered])
    conn.execute(
        sql.pass_job,
        [
            {
                "job": d.due.info.id,
                "next_at": d.next_at,
                "following": d.next_repeat,
                "ends": d.next_at is None and d.outcome is not Outcome.BUFFER,
                "now": now,
            }
            for d in decisions
        ],
    )


def _skipped_entry(decision: RunExecution, now: datetime) -> dict[str, Any]:
    return {
        "job_id": decision.due.info.id,
        "execution_tag": None,
        "action_name": Phase.MAIN.action_name,
        "status": HistoryStatus.SKIPPED,
        "retry_count": 0,
        "repeat_count": decision.repeat,
        "expected_execution_time": decision.expected,
        "start_time": now,
        "end_time": now,
        "message": decision.reason,
    }


def _queued_row(decision: RunExecution, now: datetime) -> dict[str, Any]:
    due = decision.due
    return {
        "job_id": due.info.id,
        "execution_tag": series_tag(
            due.info.id, due.schedule_set_at, decision.repeat, decision.expected
        ),
        "kind": decision.kind,
        "repeat_count": decision.repeat,
        "expected_at": decision.expected,
        "job_version": due.info.version,
        "phase": Phase.MAIN,
        "attempt": 0,
        "due_at": now + RECHECK,
        "lease_owner": None,
        "created_at": now,
    }


def gate_queued(
    conn: Connection, sql: FlowStatements, claimed: list[Claimed], now: datetime
) -> list[Claimed]:
    """Of the claimed rows, the queued executions of jobs whose executions must not overlap run
    one at a time, oldest first, once nothing else of the job is unfinished; the others go back
    to wait (`RECHECK`, or until an execution of the job ends)."""
    queued = [c for c in claimed if _is_queued(c) and c.job.policy.serial]
    if not queued:
        return claimed
    job_ids = sorted({c.job.id for c in queued})
    queued_ids = {c.run_id for c in queued}
    held = {  # job id -> its first attempt is leased on the job row
        row.id: row.lease_owner is not None for row in conn.execute(sql.take_jobs, {"ids": job_ids})
    }
    busy = {job_id for job_id, leased in held.items() if leased}
    busy |= set(job_ids) - set(held)  # the job row is locked by another transaction
    for row in conn.execute(sql.executions_of, {"ids": job_ids}):
        if row.id not in queued_ids and _started(row):
            busy.add(row.job_id)
    chosen: dict[int, Claimed] = {}
    for c in sorted(queued, key=lambda c: (c.expected, c.run_id or 0)):
        if c.job.id not in busy:
            chosen.setdefault(c.job.id, c)
    waiting = [c.run_id for c in queued if chosen.get(c.job.id) is not c and c.run_id]
    if waiting:
        conn.execute(sql.park, {"ids": sorted(waiting), "until": now + RECHECK})
    left = set(waiting)
    return [c for c in claimed if c.run_id not in left]


def _is_queued(c: Claimed) -> bool:
    return (
        c.run_id is not None
        and c.kind != ExecutionKind.RUN_NOW
        and c.phase is Phase.MAIN
        and c.attempt == 0
    )


def wake_queued(conn: Connection, sql: FlowStatements, job_ids: list[int], now: datetime) -> None:
    """An execution of these jobs ended: their queued executions may run now."""
    if job_ids:
        conn.execute(sql.wake, {"ids": sorted(set(job_ids)), "now": now})
