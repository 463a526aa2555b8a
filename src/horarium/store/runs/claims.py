"""Claiming: lease due work to this process, in one transaction per round.

First job_executions rows due now (they are older: retries, error actions, run-now requests,
and rows whose holder's lease ran out), then due jobs. A due job's execution is decided by the
caller's `decide` (pure), which may say executions were missed: those are written as Postponed
history here, in the same transaction."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.engine import Connection

from horarium.model.enums import HistoryStatus, JobState
from horarium.store.core.schema import job_history
from horarium.store.core.sealing import (
    SEALED,
    Keyring,
    SealError,
    unseal_definition,
    without_secrets,
)
from horarium.store.core.tags import is_series_tag, series_tag
from horarium.store.runs import flow, notices
from horarium.store.runs.chunks import chunks
from horarium.store.runs.statements import JOB_INFO, NO_COLLECTION, Statements
from horarium.store.runs.vocabulary import (
    Claimed,
    Decision,
    DueJob,
    ExecutionKind,
    FaultJob,
    JobInfo,
    Outcome,
    Phase,
    RunExecution,
    Shares,
    Source,
)

# Seconds of schedule computing one claim transaction may do while holding the write lock
# (catching up a minute job missed for a month takes ~0.1 s).
DECIDE_BUDGET = 0.25


@dataclass(frozen=True)
class Claimer:
    """One claim transaction's context: the statements, this process, the secrets' keyring."""

    sql: Statements
    owner: str
    keyring: Keyring | None

    def claim(
        self,
        conn: Connection,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        decide: Callable[[DueJob], Decision],
        horizon: datetime,
        shares: Shares | None = None,
    ) -> list[Claimed]:
        """`shares`: what each collection may be given (None: no bound); `until()`: the
        leases' end, read as each lease is written."""
        taking = shares or _UNBOUNDED
        claimed = self.claim_runs(conn, now, limit, until, taking)
        if len(claimed) < limit:
            claimed += self.claim_jobs(
                conn, now, limit - len(claimed), until, decide, horizon, taking
            )
        return claimed

    # -- due jobs -------------------------------------------------------------------------------

    def claim_jobs(
        self,
        conn: Connection,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        decide: Callable[[DueJob], Decision],
        horizon: datetime,
        taking: Shares,
    ) -> list[Claimed]:
        """Up to `limit` jobs due by `horizon`, leased for their next execution (those beyond
        what their collection may be given are left due)."""
        params = {"horizon": horizon, "now": now, "limit": limit, "full": _full(taking)}
        rows = conn.execute(self.sql.due_jobs, params).all()
        dues = [due for due in map(_due_job, rows) if taking.take(due.info.collection_id)]
        serial = flow.serial_jobs([due.info for due in dues])
        previous = flow.previous_executions(conn, self.sql.flow, serial) if serial else {}
        decided, faults = _decide_all(dues, decide, previous)
        runs = [run for run in decided if run.outcome is Outcome.RUN]
        for run in runs:
            self._open_secrets(run.due.info)
        if runs:
            ids = [run.due.info.id for run in runs]
            params = {"ids": ids, "owner": self.owner, "until": until()}
            conn.execute(self.sql.lease_jobs, params)
        self._postpone(conn, [run for run in decided if run.postponed], now)
        flow.settle(conn, self.sql.flow, [d for d in decided if d.outcome is not Outcome.RUN], now)
        self._fault(conn, faults, now)
        return [first_attempt(run) for run in runs]

    def _postpone(self, conn: Connection, runs: list[RunExecution], now: datetime) -> None:
        """Missed executions: history says Postponed, and the job row now points at the one
        that runs (so that a replay after a crash runs that one, not the missed ones again)."""
        if not runs:
            return
        conn.execute(
            self.sql.skip_to,
            [{"job": r.due.info.id, "runs_at": r.expected, "runs_repeat": r.repeat} for r in runs],
        )
        history = [
            _entry(
                run.due.info.id,
                HistoryStatus.POSTPONED,
                repeat,
                expected,
                now,
                run.postponed_message(expected, i) if run.postponed_message else "",
            )
            for run in runs
            for i, (expected, repeat) in enumerate(run.postponed)
        ]
        for part in chunks(history):
            conn.execute(insert(job_history), list(part))
        notices.postponed(conn, runs, now)

    def _fault(self, conn: Connection, faults: list[FaultJob], now: datetime) -> None:
        for fault in faults:
            due = fault.due
            conn.execute(self.sql.fault_job, {"job": due.info.id, "now": now})
            entry = _entry(
                due.info.id,
                HistoryStatus.FAILED,
                due.next_repeat,
                due.next_execution_at,
                now,
                fault.message,
            )
            conn.execute(insert(job_history), entry)
        notices.schedule_faults(conn, faults, now)

    # -- job_executions rows --------------------------------------------------------------------

    def claim_runs(
        self,
        conn: Connection,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        taking: Shares,
    ) -> list[Claimed]:
        """Up to `limit` job_executions rows whose attempt is due, leased (those beyond what
        their collection may be given are left due)."""
        due = conn.execute(self.sql.due_runs, {"now": now, "limit": limit, "full": _full(taking)})
        ids = sorted(row.id for row in due if taking.take(row.collection_id))
        if not ids:
            return []
        params = {"ids": ids, "owner": self.owner, "until": until()}
        taken = conn.execute(self.sql.lease_runs, params).all()
        infos, series_set_at = self._jobs_of(conn, sorted({t.job_id for t in taken}))
        claimed: list[Claimed] = []
        abandoned: list[int] = []
        for row in taken:
            info = infos.get(row.job_id)
            if info is None:
                continue  # the job was deleted; the cascade removed the row
            if info.state == JobState.DISABLED and row.kind != ExecutionKind.RUN_NOW:
                abandoned.append(row.id)  # disabling a job stops its pending retries
                continue
            claimed.append(_continued(row, info, series_set_at[row.job_id]))
        if abandoned:
            conn.execute(self.sql.drop_runs, {"ids": abandoned})
        return flow.gate_queued(conn, self.sql.flow, claimed, now)

    def _jobs_of(
        self, conn: Connection, job_ids: list[int]
    ) -> tuple[dict[int, JobInfo], dict[int, datetime]]:
        infos: dict[int, JobInfo] = {}
        series_set_at: dict[int, datetime] = {}
        width = len(JOB_INFO)
        for row in conn.execute(self.sql.jobs_of_runs, {"ids": job_ids}):
            info = infos[row.id] = JobInfo(*row[:width])
            self._open_secrets(info)
            series_set_at[row.id] = row.schedule_set_at
        return infos, series_set_at

    def _open_secrets(self, info: JobInfo) -> None:
        """The claimed job's definition with its secrets usable; only a job that has any is
        decrypted (its stored definition holds `sealed`)."""
        if SEALED not in info.definition:
            return
        try:
            info.definition = unseal_definition(info.definition, self.keyring)
        except SealError as exc:
            info.definition = without_secrets(info.definition)
            info.unreadable = (
                f"The job's secrets cannot be read by this process, so nothing was run: {exc}."
            )


class _Unbounded:
    """No bound: every collection may be given every execution."""

    def full(self) -> list[int]:
        return []

    def take(self, collection_id: int) -> bool:
        return True


_UNBOUNDED = _Unbounded()


def _full(taking: Shares) -> list[int]:
    """The collections a statement passes over: never empty (see `statements.NO_COLLECTION`)."""
    return [NO_COLLECTION, *taking.full()]


def _due_job(row: Sequence[Any]) -> DueJob:
    """A row of `due_jobs`: the job's JOB_INFO columns, then its series and lease."""
    width = len(JOB_INFO)
    next_execution_at, next_repeat, schedule_set_at, lease_owner = row[width:]
    return DueJob(
        JobInfo(*row[:width]),
        next_execution_at,
        next_repeat,
        schedule_set_at,
        in_flight=lease_owner is not None,
    )


def _decide_all(
    dues: Sequence[DueJob],
    decide: Callable[[DueJob], Decision],
    previous: dict[int, tuple[datetime | None, bool]],
) -> tuple[list[RunExecution], list[FaultJob]]:
    """`decide` for each due job, oldest first, within DECIDE_BUDGET (long catch-ups: the rest
    wait for the next round); `previous`: the unfinished executions of jobs whose executions
    must not overlap (`flow.previous_executions`)."""
    runs: list[RunExecution] = []
    faults: list[FaultJob] = []
    deadline = time.monotonic() + DECIDE_BUDGET
    for due in dues:
        due.previous, due.buffered = previous.get(due.info.id, (None, False))
        decision = decide(due)
        if isinstance(decision, RunExecution):
            runs.append(decision)
        else:
            faults.append(decision)
        if time.monotonic() > deadline:
            break
    return runs, faults


def first_attempt(run: RunExecution) -> Claimed:
    """The claimed first attempt of the execution decided for a due job (held on its row)."""
    due = run.due
    return Claimed(
        source=Source.JOB_ROW,
        run_id=None,
        tag=series_tag(due.info.id, due.schedule_set_at, run.repeat, run.expected),
        kind=run.kind,
        repeat=run.repeat,
        expected=run.expected,
        job_version=due.info.version,
        phase=Phase.MAIN,
        attempt=0,
        job=due.info,
        next_at=run.next_at,
        next_repeat=run.next_repeat,
        series_set_at=due.schedule_set_at,
    )


def _continued(row: Any, info: JobInfo, schedule_set_at: datetime) -> Claimed:
    return Claimed(
        source=Source.RUN_ROW,
        run_id=row.id,
        tag=row.execution_tag,
        kind=ExecutionKind(row.kind),
        repeat=row.repeat_count,
        expected=row.expected_at,
        job_version=_continuing_version(row, info, schedule_set_at),
        phase=Phase(row.phase),
        attempt=row.attempt,
        job=info,
    )


def _continuing_version(row: Any, info: JobInfo, schedule_set_at: datetime) -> int:
    """The job version a continuing execution (retry, error action) runs and ends under. An API
    write that kept the series (its tag still matches: e.g. a PATCH correcting the action between
    retries) is adopted, so the execution still ends the job; a write that restarted the series
    is not."""
    if row.job_version != info.version and is_series_tag(
        row.execution_tag, info.id, schedule_set_at, row.repeat_count, row.expected_at
    ):
        return info.version
    return int(row.job_version)


def _entry(
    job_id: int,
    status: HistoryStatus,
    repeat: int,
    expected: datetime,
    now: datetime,
    message: str,
) -> dict[str, Any]:
    """A history row written at claim time (Postponed, or Failed for a broken schedule)."""
    return {
        "job_id": job_id,
        "execution_tag": None,
        "action_name": Phase.MAIN.action_name,
        "status": status,
        "retry_count": 0,
        "repeat_count": repeat,
        "expected_execution_time": expected,
        "start_time": now,
        "end_time": now,
        "message": message,
    }
