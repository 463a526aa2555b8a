"""An in-memory `RunStore`: the engine's store contract kept in dictionaries, so the dispatcher,
the recorder and the decider run without a database (fast unit tests). It follows the same
rules as `horarium.store.runs.store.Runs`: continuing executions before due jobs, leases,
records accepted only for executions still held, retries and error actions as rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from horarium.model.enums import HistoryStatus, JobState
from horarium.recurrence import plan
from horarium.store.runs.claims import first_attempt
from horarium.store.runs.vocabulary import (
    Attempt,
    Claimed,
    Decision,
    DueJob,
    ExecutionKind,
    Finish,
    JobInfo,
    Phase,
    Retry,
    RunExecution,
    Shares,
    Source,
    StartErrorAction,
)

COLLECTION = 1  # the id of the collection jobs are in unless `add` names another


@dataclass
class MemoryJob:
    info: JobInfo
    schedule_set_at: datetime
    next_at: datetime | None
    next_repeat: int = 1
    lease_owner: str | None = None
    lease_until: datetime | None = None
    executions: int = 0
    failures: int = 0
    faults: int = 0


@dataclass
class MemoryRun:
    id: int
    job_id: int
    tag: str
    kind: ExecutionKind
    repeat: int
    expected: datetime
    phase: Phase
    attempt: int
    due_at: datetime
    lease_owner: str | None = None


@dataclass
class Entry:
    """A history entry."""

    job: str
    action: str
    status: HistoryStatus
    retry: int
    started: datetime


@dataclass
class MemoryRunStore:
    owner: str = "memory"
    jobs: dict[int, MemoryJob] = field(default_factory=dict)
    runs: dict[int, MemoryRun] = field(default_factory=dict)
    history: list[Entry] = field(default_factory=list)
    claims: int = 0  # claim transactions so far
    released: list[str] = field(default_factory=list)  # keys handed back by `release`

    def add(
        self,
        name: str,
        definition: Mapping[str, Any],
        created: datetime,
        collection: int = COLLECTION,
    ) -> int:
        """A job as the API stores it: its first execution from its plan."""
        job_id = len(self.jobs) + 1
        info = JobInfo(
            job_id, name, definition, JobState.ENABLED, 1, "sub", "rg", f"coll{collection}",
            collection,
        )  # fmt: skip
        first = plan(definition, created=created).first
        self.jobs[job_id] = MemoryJob(info, created, first)
        return job_id

    def entries(self, name: str) -> list[Entry]:
        return [e for e in self.history if e.job == name]

    async def claim(
        self,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        decide: Callable[[DueJob], Decision],
        horizon: datetime | None = None,
        shares: Shares | None = None,
    ) -> list[Claimed]:
        self.claims += 1
        end = until()
        # As `Runs`: of the first `limit` due rows of collections not full, those `take` counts.
        full = set(shares.full()) if shares is not None else set()

        def collection_of(job_id: int) -> int:
            return self.jobs[job_id].info.collection_id

        def given(job_id: int) -> bool:
            return shares is None or shares.take(collection_of(job_id))

        runs = [r for r in self._due_runs(now) if collection_of(r.job_id) not in full][:limit]
        claimed = [self._claim_run(run, end) for run in runs if given(run.job_id)]
        if len(claimed) >= limit:
            return claimed
        if shares is not None:
            full = set(shares.full())
        jobs = [
            j for j in self._due_jobs(horizon or now, now) if collection_of(j.info.id) not in full
        ]
        for job in jobs[: limit - len(claimed)]:
            if not given(job.info.id):
                continue
            due = DueJob(
                job.info,
                job.next_at,
                job.next_repeat,
                job.schedule_set_at,
                job.lease_owner is not None,
            )
            decision = decide(due)
            if not isinstance(decision, RunExecution):
                job.info.state, job.next_at = JobState.FAULTED, None
                continue
            job.next_at, job.next_repeat = decision.expected, decision.repeat
            job.lease_owner, job.lease_until = self.owner, end
            claimed.append(first_attempt(decision))
        return claimed

    def _due_runs(self, now: datetime) -> list[MemoryRun]:
        return sorted((r for r in self.runs.values() if r.due_at <= now), key=lambda r: r.due_at)

    def _due_jobs(self, horizon: datetime, now: datetime) -> list[MemoryJob]:
        due = [
            j
            for j in self.jobs.values()
            if j.next_at is not None
            and j.next_at <= horizon
            and j.info.state == JobState.ENABLED
            and (j.lease_owner is None or (j.lease_until is not None and j.lease_until <= now))
        ]
        return sorted(due, key=lambda j: j.next_at or now)

    def _claim_run(self, run: MemoryRun, until: datetime) -> Claimed:
        run.lease_owner, run.due_at = self.owner, until
        job = self.jobs[run.job_id]
        return Claimed(
            Source.RUN_ROW, run.id, run.tag, run.kind, run.repeat, run.expected,
            job.info.version, run.phase, run.attempt, job.info,
        )  # fmt: skip

    async def renew(self, held: Sequence[Claimed], until: Callable[[], datetime]) -> None:
        end = until()
        for claimed in held:
            if claimed.run_id is None:
                job = self.jobs[claimed.job.id]
                if job.lease_owner == self.owner:
                    job.lease_until = end
            elif (run := self.runs.get(claimed.run_id)) and run.lease_owner == self.owner:
                run.due_at = end

    async def release(self, held: Sequence[Claimed], now: datetime) -> None:
        self.released.extend(c.key for c in held)
        await self.renew(held, lambda: now)

    async def expire_gone_leases(self, now: datetime, gone: Callable[[str], bool]) -> int:
        return 0

    async def mark_started(self, started: Sequence[Claimed], now: datetime) -> None:
        pass  # deadlines are watched by the database stores only

    async def next_due(self, full: Sequence[int] = ()) -> datetime | None:
        times = [
            j.next_at
            for j in self.jobs.values()
            if j.next_at and j.lease_owner is None and j.info.collection_id not in full
        ]
        times += [
            r.due_at
            for r in self.runs.values()
            if self.jobs[r.job_id].info.collection_id not in full
        ]
        return min(times) if times else None

    async def record(self, attempts: Sequence[Attempt], now: datetime) -> set[str]:
        accepted = [a for a in attempts if self._holds(a.execution)]
        for a in accepted:
            self._record_one(a, now)
        return {a.execution.key for a in accepted}

    async def close(self) -> None:
        pass

    def _holds(self, claimed: Claimed) -> bool:
        if claimed.run_id is None:
            return self.jobs[claimed.job.id].lease_owner == self.owner
        run = self.runs.get(claimed.run_id)
        return run is not None and run.lease_owner == self.owner and run.attempt == claimed.attempt

    def _record_one(self, attempt: Attempt, now: datetime) -> None:
        execution, step = attempt.execution, attempt.step
        job = self.jobs[execution.job.id]
        status = HistoryStatus.COMPLETED if attempt.succeeded else HistoryStatus.FAILED
        action = execution.phase.action_name
        entry = Entry(job.info.name, action, status, execution.attempt, attempt.started)
        self.history.append(entry)
        job.executions += 1
        job.failures += 0 if attempt.succeeded else 1
        job.faults += 1 if attempt.faults else 0
        if execution.run_id is None:
            job.next_at, job.next_repeat = execution.next_at, execution.next_repeat
            job.lease_owner = job.lease_until = None
            run = MemoryRun(
                len(self.runs) + 1000, job.info.id, execution.tag, execution.kind,
                execution.repeat, execution.expected, Phase.MAIN, 0, now,
            )  # fmt: skip
            self.runs[run.id] = run
        else:
            run = self.runs[execution.run_id]
        if isinstance(step, Finish):
            self.runs.pop(run.id, None)
            if execution.kind in (ExecutionKind.ONCE, ExecutionKind.LAST):
                faulted = step.faulted and execution.kind == ExecutionKind.ONCE
                job.info.state = JobState.FAULTED if faulted else JobState.COMPLETED
        elif isinstance(step, Retry):
            run.attempt, run.due_at, run.lease_owner = step.attempt, attempt.retry_at or now, None
        elif isinstance(step, StartErrorAction):
            run.phase, run.attempt, run.due_at, run.lease_owner = Phase.ERROR, 0, now, None
