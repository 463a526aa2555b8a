"""Recording finished attempts, in one transaction: a history entry each, the jobs' status
counters, each execution's next step (retry, error action, finish), the series' advance, the
final states and the notifications they make (`notices`). Only executions this process still
holds are written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from horarium.model.enums import HistoryStatus, JobState
from horarium.store.runs import notices
from horarium.store.runs.flow import wake_queued
from horarium.store.runs.statements import Statements
from horarium.store.runs.vocabulary import (
    Attempt,
    ExecutionKind,
    Finish,
    Phase,
    Retry,
    StartErrorAction,
)

Stamp = Callable[[datetime | None], Any]

# States are bound as plain `str`: the sqlite3 driver takes a `str` subclass (the enums)
# through its adaptation protocol, which costs more than the rest of the value's binding.
_COMPLETED = HistoryStatus.COMPLETED.value
_FAILED = HistoryStatus.FAILED.value


def record(
    conn: Connection, sql: Statements, owner: str, attempts: Sequence[Attempt], now: datetime
) -> set[str]:
    """Write `attempts`; returns the keys of the executions written (those still held)."""
    accepted = _still_held(conn, sql, owner, attempts)
    if not accepted:
        return set()
    stamp: Stamp = sql.dialect.stamper()
    sql.dialect.write_history(conn, sql.insert_history, [_history(a, stamp) for a in accepted])
    first = [a for a in accepted if a.execution.run_id is None]
    later = [a for a in accepted if a.execution.run_id is not None]
    _continue_first(conn, sql, first, now)
    _advance_later(conn, sql, later, now)
    recorded_at = stamp(now)
    first.sort(key=lambda a: a.execution.job.id)
    sql.dialect.execute_many(
        conn, sql.after_first, [_after_first(a, recorded_at, stamp) for a in first]
    )
    sql.dialect.execute_many(
        conn, sql.after_later, [_counters(group, recorded_at, stamp) for group in _by_job(later)]
    )
    _wake_waiting(conn, sql, accepted, now)
    notices.recorded(conn, accepted, now)
    return {a.execution.key for a in accepted}


def _still_held(
    conn: Connection, sql: Statements, owner: str, attempts: Sequence[Attempt]
) -> list[Attempt]:
    """The attempts whose execution this process still holds (its lease may have been taken
    over, or the job deleted), at the phase and attempt it ran.

    Locks every job row the record writes (a later attempt's job too: its counters), then the
    job_executions rows, each in id order (docs/engine.md, "Lock order"); the rest of the
    transaction writes only rows locked here, and inserts rows referring to them."""
    job_ids = sorted({a.execution.job.id for a in attempts})
    run_ids = sorted({a.execution.run_id for a in attempts if a.execution.run_id is not None})
    held_jobs: set[int] = set()
    held_runs: dict[int, tuple[str, int]] = {}
    if job_ids:
        for job_id, lease_owner in conn.execute(sql.lock_jobs, {"ids": job_ids}):
            if lease_owner == owner:
                held_jobs.add(job_id)
    if run_ids:
        for run_id, phase, attempt in conn.execute(sql.held_runs, {"ids": run_ids, "owner": owner}):
            held_runs[run_id] = (phase, attempt)

    def holds(attempt: Attempt) -> bool:
        execution = attempt.execution
        if execution.run_id is None:
            return execution.job.id in held_jobs
        return held_runs.get(execution.run_id) == (execution.phase, execution.attempt)

    return [a for a in attempts if holds(a)]


def _wake_waiting(
    conn: Connection, sql: Statements, accepted: list[Attempt], now: datetime
) -> None:
    """Executions that ended let the queued ones of their job run (jobs whose executions must
    not overlap, `executionPolicy`)."""
    ended = [
        a.execution.job.id
        for a in accepted
        if isinstance(a.step, Finish) and a.execution.job.policy.serial
    ]
    if ended:
        wake_queued(conn, sql.flow, ended, now)


def _history(attempt: Attempt, stamp: Stamp) -> dict[str, Any]:
    execution = attempt.execution
    return {
        "entry_job": execution.job.id,
        "entry_tag": execution.tag,
        "entry_action": execution.phase.action_name,
        "entry_status": _COMPLETED if attempt.succeeded else _FAILED,
        "entry_retry": execution.attempt,
        "entry_repeat": execution.repeat,
        "entry_expected": stamp(execution.expected),
        "entry_start": stamp(attempt.started),
        "entry_end": stamp(attempt.ended),
        "entry_message": attempt.history_message,
    }


def _continue_first(conn: Connection, sql: Statements, first: list[Attempt], now: datetime) -> None:
    """A first attempt that has more to come moves its execution to a job_executions row."""
    rows = [
        {
            "job_id": a.execution.job.id,
            "execution_tag": a.execution.tag,
            "kind": a.execution.kind,
            "repeat_count": a.execution.repeat,
            "expected_at": a.execution.expected,
            "job_version": a.execution.job_version,
            "phase": Phase.ERROR if isinstance(a.step, StartErrorAction) else Phase.MAIN,
            "attempt": a.step.attempt if isinstance(a.step, Retry) else 0,
            "due_at": a.retry_at or now,
            "lease_owner": None,
            "created_at": now,
        }
        for a in first
        if not isinstance(a.step, Finish)
    ]
    if rows:
        conn.execute(sql.insert_runs, rows)


def _advance_later(conn: Connection, sql: Statements, later: list[Attempt], now: datetime) -> None:
    """A job_executions row moves on to its retry or its error action, or goes."""
    retries = [
        {"run": a.execution.run_id, "next_attempt": a.step.attempt, "retry_at": a.retry_at}
        for a in later
        if isinstance(a.step, Retry)
    ]
    if retries:
        conn.execute(sql.retry_runs, retries)
    errors = sorted(_run_ids(later, StartErrorAction))
    if errors:
        conn.execute(sql.start_error_actions, {"ids": errors, "now": now})
    finished = sorted(_run_ids(later, Finish))
    if finished:
        conn.execute(sql.drop_runs, {"ids": finished})


def _run_ids(attempts: list[Attempt], step: type) -> list[int]:
    return [
        a.execution.run_id
        for a in attempts
        if isinstance(a.step, step) and a.execution.run_id is not None
    ]


def _final_state(attempt: Attempt) -> JobState | None:
    """The job's state once this attempt is recorded, when it ends the series."""
    kind = attempt.execution.kind
    if not isinstance(attempt.step, Finish) or kind not in (ExecutionKind.LAST, ExecutionKind.ONCE):
        return None
    if kind == ExecutionKind.ONCE and attempt.step.faulted:
        return JobState.FAULTED
    return JobState.COMPLETED


def _after_first(attempt: Attempt, recorded_at: Any, stamp: Stamp) -> dict[str, Any]:
    """The job update after a first attempt: counters, and the series' advance."""
    execution = attempt.execution
    return {
        **_counters([attempt], recorded_at, stamp),
        "expected": stamp(execution.expected),
        "series_set_at": stamp(execution.series_set_at),
        "next_at": stamp(execution.next_at),
        "following": execution.next_repeat,
    }


def _counters(group: list[Attempt], recorded_at: Any, stamp: Stamp) -> dict[str, Any]:
    """Status counters of one job's attempts: every attempt is an execution, every failed one a
    failure, the attempt that faults its execution (the main action's last allowed one failed)
    one more faulted; the last final state among them."""
    first = group[0]
    failures = faults = 0
    started = first.started
    final_state, version = None, first.execution.job_version
    for a in group:
        failures += not a.succeeded
        faults += a.faults
        started = max(started, a.started)
        if (state := _final_state(a)) is not None:
            final_state, version = state, a.execution.job_version
    return {
        "job": first.execution.job.id,
        "executions": len(group),
        "failures": failures,
        "faults": faults,
        "started": stamp(started),
        "final_state": None if final_state is None else final_state.value,
        "read_version": version,
        "recorded_at": recorded_at,
    }


def _by_job(attempts: list[Attempt]) -> list[list[Attempt]]:
    """Attempts grouped by job, in job id order."""
    groups: dict[int, list[Attempt]] = {}
    for a in attempts:
        groups.setdefault(a.execution.job.id, []).append(a)
    return [groups[job_id] for job_id in sorted(groups)]
