"""The engine's SQL, in one place: make due executions, claim them under a lease, record attempts.

A job's next execution lives in `jobs.next_execution_at` (indexed). When it is due, the engine
turns it into a `job_executions` row (with its execution tag) and advances the job, in one
transaction; attempts, retries and the error action then work off that row until it finishes.
A row's `due_at` is when it may be claimed: the next attempt's time, or, while a process holds
it, the lease expiry — so one indexed range (`due_at <= now`) finds both new work and work
abandoned by a crashed process, and nothing else.

Claims: PostgreSQL locks candidate rows with `FOR UPDATE SKIP LOCKED`; SQLite has one writer,
and each write transaction starts with `BEGIN IMMEDIATE` (taken under an in-process lock so
this process's writers queue in asyncio instead of in SQLite's busy handler).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, case, delete, func, insert, or_, select, update
from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from horarium.store.schema import job_collections, job_executions, job_history, jobs

# Execution kinds: what finishing the execution does to the job's state.
SCHEDULED = "scheduled"  # an execution of a recurring series with more to come: nothing
LAST = "last"  # the last execution of a recurring series: Completed
ONCE = "once"  # a one-time job's execution: Completed, or Faulted when it faulted
RUN_NOW = "run_now"  # POST …/run: outside the series, never changes the state

# Seconds of schedule computing one make_due transaction may do while holding the write lock
# (catching up a minute job missed for a month takes ~0.1 s).
DECIDE_BUDGET = 0.25

MAIN = "main"
ERROR = "error"

COMPLETED = "Completed"
FAILED = "Failed"
POSTPONED = "Postponed"


def new_tag() -> str:
    """An execution tag: 32 hex characters, as the live service's."""
    return uuid.uuid4().hex


async def request_run(conn: AsyncConnection, job_id: int, at: datetime) -> None:
    """Ask for one immediate execution of job row `job_id`, inside the caller's transaction.

    The run is outside the job's series: `repeatCount` 0, `expectedExecutionTime` = `at`, the
    schedule and the state are left as they are. The engine picks it up at its next look (the
    API may call `horarium.engine.service.wake()` after committing to make that immediate).
    """
    version = select(jobs.c.version).where(jobs.c.id == job_id).scalar_subquery()
    await conn.execute(
        insert(job_executions).values(
            job_id=job_id,
            execution_tag=new_tag(),
            kind=RUN_NOW,
            repeat_count=0,
            expected_at=at,
            job_version=version,
            phase=MAIN,
            attempt=0,
            due_at=at,
            lease_owner=None,
            created_at=at,
        )
    )


@dataclass(frozen=True)
class JobInfo:
    """What an attempt needs from the job row (read at claim time: the current definition)."""

    id: int
    name: str
    definition: Mapping[str, Any]
    state: str
    version: int
    subscription_id: str
    resource_group: str
    collection: str


@dataclass(frozen=True)
class Claimed:
    """An execution this process holds under a lease, ready for its next attempt."""

    id: int
    tag: str
    kind: str
    repeat: int
    expected: datetime
    job_version: int
    phase: str
    attempt: int
    job: JobInfo


@dataclass(frozen=True)
class DueJob:
    """A job whose next execution is due, as read for materialising."""

    info: JobInfo
    next_execution_at: datetime
    next_repeat: int
    schedule_set_at: datetime


@dataclass(frozen=True)
class Made:
    """What the engine decided for one due job: the execution to run and the job's advance."""

    due: DueJob
    kind: str  # SCHEDULED / LAST / ONCE
    repeat: int
    expected: datetime
    next_at: datetime | None
    next_repeat: int
    postponed: Sequence[tuple[datetime, int]] = ()  # (expected, repeatCount), oldest first
    postponed_message: Callable[[datetime, int], str] | None = None


@dataclass(frozen=True)
class Broken:
    """A due job whose stored schedule cannot be computed: it faults with this message."""

    due: DueJob
    message: str


@dataclass(frozen=True)
class Attempt:
    """One finished attempt and what follows it, for `record`."""

    execution: Claimed
    started: datetime
    ended: datetime
    succeeded: bool
    message: str
    # What follows: retry at `retry_at` (attempt `next_attempt`), start the error action, or finish.
    follow: str  # "retry" / "error" / "finish"
    retry_at: datetime | None = None
    next_attempt: int = 0
    faulted: bool = False  # with "finish": no attempt of the main or error action succeeded


def _chunks(items: Sequence[Any], size: int = 500) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class Runs:
    """The engine's store operations on one database, for one engine process (`owner`)."""

    def __init__(self, db: AsyncEngine, owner: str) -> None:
        self.db = db
        self.owner = owner
        self.sqlite = db.dialect.name == "sqlite"
        self._write_lock = asyncio.Lock()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction; on SQLite it holds the database's write lock from the start."""
        if self.sqlite:
            async with self._write_lock, self.db.connect() as conn:
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    await conn.rollback()
                    raise
                await conn.commit()
        else:
            async with self.db.begin() as conn:
                yield conn

    # -- reading jobs -------------------------------------------------------------------------

    _job_columns = (
        jobs.c.id,
        jobs.c.name,
        jobs.c.definition,
        jobs.c.state,
        jobs.c.version,
        job_collections.c.subscription_id,
        job_collections.c.resource_group,
        job_collections.c.name.label("collection"),
    )

    @staticmethod
    def _job_info(row: Row[Any] | Any) -> JobInfo:
        return JobInfo(
            id=row.id,
            name=row.name,
            definition=row.definition,
            state=row.state,
            version=row.version,
            subscription_id=row.subscription_id,
            resource_group=row.resource_group,
            collection=row.collection,
        )

    # -- making executions from due jobs -------------------------------------------------------

    async def make_due(
        self,
        now: datetime,
        limit: int,
        lease: timedelta,
        decide: Callable[[DueJob], Made | Broken],
    ) -> list[Claimed]:
        """Turn up to `limit` due jobs into executions claimed by this process, advancing each
        job to its next execution and writing Postponed history for missed ones — one
        transaction. `decide` (pure) says what runs and what comes next."""
        async with self.write() as conn:
            query = (
                select(
                    *self._job_columns,
                    jobs.c.next_execution_at,
                    jobs.c.next_repeat,
                    jobs.c.schedule_set_at,
                )
                .join(job_collections, job_collections.c.id == jobs.c.collection_id)
                .where(jobs.c.next_execution_at <= now, jobs.c.state == "Enabled")
                .order_by(jobs.c.next_execution_at)
                .limit(limit)
            )
            if not self.sqlite:
                query = query.with_for_update(skip_locked=True, of=jobs)
            rows = (await conn.execute(query)).all()
            if not rows:
                return []
            made: list[Made] = []
            broken: list[Broken] = []
            deadline = time.monotonic() + DECIDE_BUDGET
            for row in rows:
                due = DueJob(
                    info=self._job_info(row),
                    next_execution_at=row.next_execution_at,
                    next_repeat=row.next_repeat,
                    schedule_set_at=row.schedule_set_at,
                )
                outcome = decide(due)
                (made if isinstance(outcome, Made) else broken).append(outcome)  # type: ignore[arg-type]
                if time.monotonic() > deadline:
                    break  # long catch-ups (missed executions): the rest wait for the next round
            claimed = await self._insert_made(conn, made, now, lease)
            await self._fault_broken(conn, broken, now)
            return claimed

    async def _insert_made(
        self, conn: AsyncConnection, made: list[Made], now: datetime, lease: timedelta
    ) -> list[Claimed]:
        if not made:
            return []
        await conn.execute(
            update(jobs)
            .where(
                jobs.c.id == bindparam("b_id"),
                jobs.c.version == bindparam("b_version"),
            )
            .values(next_execution_at=bindparam("b_next"), next_repeat=bindparam("b_rep")),
            [
                {
                    "b_id": m.due.info.id,
                    "b_version": m.due.info.version,
                    "b_next": m.next_at,
                    "b_rep": m.next_repeat,
                }
                for m in made
            ],
        )
        until = now + lease
        rows = [
            {
                "job_id": m.due.info.id,
                "execution_tag": new_tag(),
                "kind": m.kind,
                "repeat_count": m.repeat,
                "expected_at": m.expected,
                "job_version": m.due.info.version,
                "phase": MAIN,
                "attempt": 0,
                "due_at": until,
                "lease_owner": self.owner,
                "created_at": now,
            }
            for m in made
        ]
        ids = (
            (
                await conn.execute(
                    insert(job_executions).returning(
                        job_executions.c.id, sort_by_parameter_order=True
                    ),
                    rows,
                )
            )
            .scalars()
            .all()
        )
        history = [
            {
                "job_id": m.due.info.id,
                "execution_tag": None,
                "action_name": "MainAction",
                "status": POSTPONED,
                "retry_count": 0,
                "repeat_count": repeat,
                "expected_execution_time": expected,
                "start_time": now,
                "end_time": now,
                "message": m.postponed_message(expected, i) if m.postponed_message else "",
            }
            for m in made
            for i, (expected, repeat) in enumerate(m.postponed)
        ]
        for chunk in _chunks(history):
            await conn.execute(insert(job_history), list(chunk))
        return [
            Claimed(
                id=id_,
                tag=str(r["execution_tag"]),
                kind=m.kind,
                repeat=m.repeat,
                expected=m.expected,
                job_version=m.due.info.version,
                phase=MAIN,
                attempt=0,
                job=m.due.info,
            )
            for id_, r, m in zip(ids, rows, made, strict=True)
        ]

    async def _fault_broken(
        self, conn: AsyncConnection, broken: list[Broken], now: datetime
    ) -> None:
        for b in broken:
            info = b.due.info
            done = await conn.execute(
                update(jobs)
                .where(jobs.c.id == info.id, jobs.c.version == info.version)
                .values(state="Faulted", ended_at=now, next_execution_at=None)
            )
            if done.rowcount:
                await conn.execute(
                    insert(job_history).values(
                        job_id=info.id,
                        action_name="MainAction",
                        status=FAILED,
                        retry_count=0,
                        repeat_count=b.due.next_repeat,
                        expected_execution_time=b.due.next_execution_at,
                        start_time=now,
                        end_time=now,
                        message=b.message,
                    )
                )

    # -- claiming pending executions -----------------------------------------------------------

    async def claim(self, now: datetime, limit: int, lease: timedelta) -> list[Claimed]:
        """Claim up to `limit` executions whose attempt is due (retries, error actions, run-now
        requests, and executions whose holder's lease ran out)."""
        async with self.write() as conn:
            candidates = (
                select(job_executions.c.id)
                .where(job_executions.c.due_at <= now)
                .order_by(job_executions.c.due_at)
                .limit(limit)
            )
            if not self.sqlite:
                candidates = candidates.with_for_update(skip_locked=True)
            taken = (
                await conn.execute(
                    update(job_executions)
                    .where(job_executions.c.id.in_(candidates.scalar_subquery()))
                    .values(lease_owner=self.owner, due_at=now + lease)
                    .returning(
                        job_executions.c.id,
                        job_executions.c.job_id,
                        job_executions.c.execution_tag,
                        job_executions.c.kind,
                        job_executions.c.repeat_count,
                        job_executions.c.expected_at,
                        job_executions.c.job_version,
                        job_executions.c.phase,
                        job_executions.c.attempt,
                    )
                )
            ).all()
            if not taken:
                return []
            job_ids = sorted({t.job_id for t in taken})
            infos: dict[int, JobInfo] = {}
            for chunk in _chunks(job_ids):
                for row in await conn.execute(
                    select(*self._job_columns)
                    .join(job_collections, job_collections.c.id == jobs.c.collection_id)
                    .where(jobs.c.id.in_(chunk))
                ):
                    infos[row.id] = self._job_info(row)
            claimed: list[Claimed] = []
            abandoned: list[int] = []
            for t in taken:
                info = infos.get(t.job_id)
                if info is None:
                    continue  # the job was deleted; the cascade removed the row
                if info.state == "Disabled" and t.kind != RUN_NOW:
                    abandoned.append(t.id)  # disabling a job stops its pending retries
                    continue
                claimed.append(
                    Claimed(
                        id=t.id,
                        tag=t.execution_tag,
                        kind=t.kind,
                        repeat=t.repeat_count,
                        expected=t.expected_at,
                        job_version=t.job_version,
                        phase=t.phase,
                        attempt=t.attempt,
                        job=info,
                    )
                )
            for chunk in _chunks(abandoned):
                await conn.execute(delete(job_executions).where(job_executions.c.id.in_(chunk)))
            return claimed

    async def renew(self, ids: Sequence[int], until: datetime) -> None:
        """Extend this process's lease on executions still running."""
        async with self.write() as conn:
            for chunk in _chunks(list(ids)):
                await conn.execute(
                    update(job_executions)
                    .where(
                        job_executions.c.id.in_(chunk),
                        job_executions.c.lease_owner == self.owner,
                    )
                    .values(due_at=until)
                )

    async def release(self, ids: Sequence[int], now: datetime) -> None:
        """Give back executions this process holds but will not run (shutting down)."""
        async with self.write() as conn:
            for chunk in _chunks(list(ids)):
                await conn.execute(
                    update(job_executions)
                    .where(
                        job_executions.c.id.in_(chunk),
                        job_executions.c.lease_owner == self.owner,
                    )
                    .values(due_at=now, lease_owner=None)
                )

    async def next_due(self) -> datetime | None:
        """The earliest instant anything may become due (a job's next execution, a retry, a
        lease expiry): how long the dispatcher may sleep. Two index lookups."""
        async with self.db.connect() as conn:
            job_at = (
                await conn.execute(
                    select(func.min(jobs.c.next_execution_at)).where(
                        jobs.c.next_execution_at.is_not(None)
                    )
                )
            ).scalar()
            run_at = (await conn.execute(select(func.min(job_executions.c.due_at)))).scalar()
        times = [t for t in (job_at, run_at) if t is not None]
        return min(times) if times else None

    # -- recording attempts --------------------------------------------------------------------

    async def record(self, attempts: Sequence[Attempt], now: datetime) -> set[int]:
        """Write attempts, in one transaction: a history entry each, the job's counters, the
        execution's next step (retry, error action, or gone), and the job's final state when a
        series ends. Only executions this process still holds are written; returns their ids."""
        if not attempts:
            return set()
        async with self.write() as conn:
            held: dict[int, tuple[str, int]] = {}
            ids = sorted({a.execution.id for a in attempts})
            for chunk in _chunks(ids):
                query = select(
                    job_executions.c.id, job_executions.c.phase, job_executions.c.attempt
                ).where(job_executions.c.id.in_(chunk), job_executions.c.lease_owner == self.owner)
                if not self.sqlite:
                    query = query.with_for_update()
                for row in await conn.execute(query):
                    held[row.id] = (row.phase, row.attempt)
            accepted = [
                a
                for a in attempts
                if held.get(a.execution.id) == (a.execution.phase, a.execution.attempt)
            ]
            if not accepted:
                return set()
            await conn.execute(
                insert(job_history),
                [
                    {
                        "job_id": a.execution.job.id,
                        "execution_tag": a.execution.tag,
                        "action_name": "MainAction" if a.execution.phase == MAIN else "ErrorAction",
                        "status": COMPLETED if a.succeeded else FAILED,
                        "retry_count": a.execution.attempt,
                        "repeat_count": a.execution.repeat,
                        "expected_execution_time": a.execution.expected,
                        "start_time": a.started,
                        "end_time": a.ended,
                        "message": a.message,
                    }
                    for a in accepted
                ],
            )
            await self._advance_executions(conn, accepted, now)
            await self._count(conn, accepted)
            await self._end_series(conn, accepted, now)
            return {a.execution.id for a in accepted}

    async def _advance_executions(
        self, conn: AsyncConnection, accepted: list[Attempt], now: datetime
    ) -> None:
        retry = [a for a in accepted if a.follow == "retry"]
        error = [a for a in accepted if a.follow == "error"]
        finished = [a.execution.id for a in accepted if a.follow == "finish"]
        if retry:
            await conn.execute(
                update(job_executions)
                .where(job_executions.c.id == bindparam("b_id"))
                .values(
                    attempt=bindparam("b_attempt"),
                    due_at=bindparam("b_due"),
                    lease_owner=None,
                ),
                [
                    {"b_id": a.execution.id, "b_attempt": a.next_attempt, "b_due": a.retry_at}
                    for a in retry
                ],
            )
        if error:
            await conn.execute(
                update(job_executions)
                .where(job_executions.c.id.in_([a.execution.id for a in error]))
                .values(phase=ERROR, attempt=0, due_at=now, lease_owner=None)
            )
        for chunk in _chunks(finished):
            await conn.execute(delete(job_executions).where(job_executions.c.id.in_(chunk)))

    async def _count(self, conn: AsyncConnection, accepted: list[Attempt]) -> None:
        """Status counters: every attempt is an execution, every failed one a failure; an
        execution that ends faulted adds one to faultedCount."""
        per_job: dict[int, list[Any]] = {}
        for a in accepted:
            c = per_job.setdefault(a.execution.job.id, [0, 0, 0, a.started])
            c[0] += 1
            c[1] += 0 if a.succeeded else 1
            c[2] += 1 if a.follow == "finish" and a.faulted else 0
            c[3] = max(c[3], a.started)
        last = jobs.c.last_execution_at
        await conn.execute(
            update(jobs)
            .where(jobs.c.id == bindparam("b_id"))
            .values(
                execution_count=jobs.c.execution_count + bindparam("b_n"),
                failure_count=jobs.c.failure_count + bindparam("b_f"),
                faulted_count=jobs.c.faulted_count + bindparam("b_ft"),
                last_execution_at=case(
                    (
                        or_(
                            last.is_(None),
                            last < bindparam("b_t", type_=jobs.c.last_execution_at.type),
                        ),
                        bindparam("b_t", type_=jobs.c.last_execution_at.type),
                    ),
                    else_=last,
                ),
            ),
            [
                {"b_id": job_id, "b_n": c[0], "b_f": c[1], "b_ft": c[2], "b_t": c[3]}
                for job_id, c in sorted(per_job.items())
            ],
        )

    async def _end_series(
        self, conn: AsyncConnection, accepted: list[Attempt], now: datetime
    ) -> None:
        """The last execution of a series finished: the job is Completed (a one-time job whose
        execution faulted: Faulted) — unless the job was redefined or disabled meanwhile."""
        ending = [a for a in accepted if a.follow == "finish" and a.execution.kind in (LAST, ONCE)]
        for a in ending:
            state = "Faulted" if a.execution.kind == ONCE and a.faulted else "Completed"
            await conn.execute(
                update(jobs)
                .where(
                    and_(
                        jobs.c.id == a.execution.job.id,
                        jobs.c.version == a.execution.job_version,
                        jobs.c.state == "Enabled",
                        jobs.c.next_execution_at.is_(None),
                    )
                )
                .values(state=state, ended_at=now)
            )
