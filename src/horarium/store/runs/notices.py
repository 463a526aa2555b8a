"""Notifications (Horarium extension) written to the outbox (`schema.notifications`) in the
engine's transaction that records what they tell — a claim (Postponed and Skipped executions, a
job whose schedule faults it) or a record (a faulted execution, a Faulted job, a recovery) — so
that none is lost and none tells of something that was not recorded. The engine delivers them
(`horarium.engine.notifying`).

Only jobs whose collection notifies an event (`JobInfo.notify`, read by the claim) cost anything
here: for the others each function returns after one test per execution. A job's open fault
(`jobs.faulted_since`, what JobRecovered needs) is kept only while its collection notifies
JobRecovered. The job rows written are those the transaction has locked already."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import Connection

from horarium.model.datetimes import format_instant
from horarium.model.enums import HistoryStatus, JobState
from horarium.model.names import CollectionName
from horarium.model.notifications import (
    BITS,
    EXECUTION_FAULTED,
    EXECUTION_POSTPONED,
    EXECUTION_SKIPPED,
    JOB_FAULTED,
    JOB_RECOVERED,
)
from horarium.store.core.schema import jobs, notifications
from horarium.store.core.types import UTCDateTime
from horarium.store.runs.chunks import chunks
from horarium.store.runs.id_lists import in_ids
from horarium.store.runs.vocabulary import (
    Attempt,
    ExecutionKind,
    FaultJob,
    Finish,
    JobInfo,
    Phase,
    RunExecution,
)

MAX_POSTPONED = 100  # executions listed in one ExecutionPostponed notification (all counted)

_INSERT = insert(notifications)
_FAULTED_SINCE = select(jobs.c.id, jobs.c.faulted_since).where(in_ids(jobs.c.id))
_FAULTED_JOBS = select(jobs.c.id).where(in_ids(jobs.c.id), jobs.c.state == JobState.FAULTED)
_SET_FAULTED_SINCE = (
    update(jobs)
    .where(jobs.c.id == bindparam("job"))
    .values(faulted_since=bindparam("since", type_=UTCDateTime()))
)


def _notifies(info: JobInfo, event: str) -> bool:
    return bool(info.notify & BITS[event])


# -- a record's ----------------------------------------------------------------------------------


def recorded(conn: Connection, accepted: Sequence[Attempt], now: datetime) -> None:
    """ExecutionFaulted, JobFaulted and JobRecovered of the attempts just recorded."""
    notified = [a for a in accepted if a.execution.job.notify]
    if not notified:
        return
    rows = [
        event_row(EXECUTION_FAULTED, a.execution.job, now, execution=_attempt(a))
        for a in notified
        if a.faults and _notifies(a.execution.job, EXECUTION_FAULTED)
    ]
    rows += _job_faulted(conn, notified, now)
    rows += _recovered(conn, [a for a in notified if _notifies(a.execution.job, JOB_RECOVERED)])
    _write(conn, rows)


def _job_faulted(conn: Connection, attempts: list[Attempt], now: datetime) -> list[dict[str, Any]]:
    """The one-time jobs the record made Faulted (read back: a record does not end a job the
    API redefined meanwhile)."""
    ending = [
        a
        for a in attempts
        if a.execution.kind == ExecutionKind.ONCE
        and isinstance(a.step, Finish)
        and a.step.faulted
        and _notifies(a.execution.job, JOB_FAULTED)
    ]
    if not ending:
        return []
    ids = sorted({a.execution.job.id for a in ending})
    faulted = set(conn.execute(_FAULTED_JOBS, {"ids": ids}).scalars())
    return [
        event_row(JOB_FAULTED, a.execution.job, now, state=JobState.FAULTED, execution=_attempt(a))
        for a in ending
        if a.execution.job.id in faulted
    ]


def _recovered(conn: Connection, attempts: list[Attempt]) -> list[dict[str, Any]]:
    """A fault opens (`jobs.faulted_since`); the next success of the job's main action closes
    it, with a JobRecovered notification."""
    relevant = [
        a for a in attempts if a.faults or (a.succeeded and a.execution.phase is Phase.MAIN)
    ]
    if not relevant:
        return []
    ids = sorted({a.execution.job.id for a in relevant})
    since: dict[int, datetime | None] = {
        row.id: row.faulted_since for row in conn.execute(_FAULTED_SINCE, {"ids": ids})
    }
    before = dict(since)
    rows: list[dict[str, Any]] = []
    for a in sorted(relevant, key=lambda a: a.ended):
        job = a.execution.job
        if job.id not in since:
            continue
        if a.faults:
            since[job.id] = since[job.id] or a.ended
        elif since[job.id] is not None:
            opened = since[job.id]
            assert opened is not None
            rows.append(
                event_row(
                    JOB_RECOVERED,
                    job,
                    a.ended,
                    faultedSince=format_instant(opened),
                    execution=_attempt(a),
                )
            )
            since[job.id] = None
    changed = [{"job": j, "since": s} for j, s in since.items() if s != before[j]]
    if changed:
        conn.execute(_SET_FAULTED_SINCE, changed)
    return rows


def _attempt(a: Attempt) -> dict[str, Any]:
    execution = a.execution
    return {
        "executionTag": execution.tag,
        "actionName": execution.phase.action_name,
        "status": HistoryStatus.COMPLETED if a.succeeded else HistoryStatus.FAILED,
        "retryCount": execution.attempt,
        "repeatCount": execution.repeat,
        "expectedExecutionTime": format_instant(execution.expected),
        "startTime": format_instant(a.started),
        "endTime": format_instant(a.ended),
        "message": a.history_message,
    }


# -- a claim's -----------------------------------------------------------------------------------


def postponed(conn: Connection, runs: Sequence[RunExecution], now: datetime) -> None:
    """One ExecutionPostponed per job whose missed executions a claim recorded as Postponed."""
    rows = []
    for run in runs:
        if not _notifies(run.due.info, EXECUTION_POSTPONED):
            continue
        listed = [
            {
                "repeatCount": repeat,
                "expectedExecutionTime": format_instant(expected),
                "message": run.postponed_message(expected, i) if run.postponed_message else "",
            }
            for i, (expected, repeat) in enumerate(run.postponed[:MAX_POSTPONED])
        ]
        rows.append(
            event_row(
                EXECUTION_POSTPONED,
                run.due.info,
                now,
                count=len(run.postponed),
                executions=listed,
            )
        )
    _write(conn, rows)


def skipped(conn: Connection, decisions: Iterable[RunExecution], now: datetime) -> None:
    """ExecutionSkipped of the due executions a claim skipped (overlap Skip)."""
    rows = [
        event_row(
            EXECUTION_SKIPPED,
            d.due.info,
            now,
            execution={
                "status": HistoryStatus.SKIPPED,
                "repeatCount": d.repeat,
                "expectedExecutionTime": format_instant(d.expected),
                "message": d.reason,
            },
        )
        for d in decisions
        if _notifies(d.due.info, EXECUTION_SKIPPED)
    ]
    _write(conn, rows)


def schedule_faults(conn: Connection, faults: Sequence[FaultJob], now: datetime) -> None:
    """JobFaulted of the jobs a claim faulted (their schedule cannot be computed); opens their
    fault for JobRecovered."""
    rows = [
        event_row(
            JOB_FAULTED,
            f.due.info,
            now,
            state=JobState.FAULTED,
            execution={
                "status": HistoryStatus.FAILED,
                "repeatCount": f.due.next_repeat,
                "expectedExecutionTime": format_instant(f.due.next_execution_at),
                "message": f.message,
            },
        )
        for f in faults
        if _notifies(f.due.info, JOB_FAULTED)
    ]
    _write(conn, rows)
    opened = [
        {"job": f.due.info.id, "since": now} for f in faults if _notifies(f.due.info, JOB_RECOVERED)
    ]
    if opened:
        conn.execute(_SET_FAULTED_SINCE, opened)


# -- the rows ------------------------------------------------------------------------------------


def event_row(event: str, job: JobInfo, at: datetime, **details: Any) -> dict[str, Any]:
    """The outbox row of a job's `event` at `at`, its body naming the job plus `details`."""
    collection = CollectionName(job.subscription_id, job.resource_group, job.collection)
    body = {
        "id": str(uuid.uuid4()),
        "event": event,
        "time": format_instant(at),
        "subscriptionId": job.subscription_id,
        "resourceGroup": job.resource_group,
        "jobCollection": job.collection,
        "job": job.name,
        "jobId": f"{collection.arm_id}/jobs/{job.name}",
        **details,
    }
    return {
        "collection_id": job.collection_id,
        "event": event,
        "body": json.dumps(body, separators=(",", ":"), ensure_ascii=False),
        "created_at": at,
        "due_at": at,
        "attempts": 0,
        "finished": None,
    }


def _write(conn: Connection, rows: list[dict[str, Any]]) -> None:
    for part in chunks(rows):
        conn.execute(_INSERT, list(part))
