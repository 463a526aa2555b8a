"""The engine's SQL, in one place: claim due work under a lease, record attempts.

A job's next execution lives in its row (`jobs.next_execution_at`, indexed). A process claims a
due job by writing its lease (`lease_owner`, `lease_expires_at`) on that row and runs the first
attempt; recording the attempt advances the job to its next execution, clears the lease and
writes history and status, in one transaction. While the lease holds, the row itself is the
durable record of the execution in flight: if the process dies, the lease runs out and another
process claims the same execution, with the same execution tag (derived from the job and the
occurrence, so nothing has to be written before the first attempt).

An execution that continues after its first attempt (a retry, the error action) moves to a
`job_executions` row, as does a run-now request; there `due_at` is when the row may be claimed:
the next attempt's time, or, while claimed, the lease expiry — one indexed range
(`due_at <= now`) finds new work and work abandoned by a dead process alike.

Claims: PostgreSQL locks candidate rows with `FOR UPDATE SKIP LOCKED`; SQLite has one writer,
and each write transaction starts with `BEGIN IMMEDIATE` (taken under an in-process lock so this
process's writers queue in asyncio rather than in SQLite's busy handler).
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.types import TypeEngine

from horarium.store.db import write_transaction
from horarium.store.schema import job_collections, job_executions, job_history, jobs
from horarium.store.sealing import (
    SEALED,
    SealError,
    keyring_of,
    unseal_definition,
    without_secrets,
)
from horarium.store.transact import Transactor
from horarium.store.types import UTCDateTime

# Execution kinds: what finishing the execution does to the job's state.
SCHEDULED = "scheduled"  # an execution of a recurring series with more to come: nothing
LAST = "last"  # the last execution of a recurring series: Completed
ONCE = "once"  # a one-time job's execution: Completed, or Faulted when it faulted
RUN_NOW = "run_now"  # POST …/run: outside the series, never changes the state

# Where a claimed execution lives while it runs.
JOB_ROW = "job"  # a first attempt, leased on the job row
RUN_ROW = "run"  # a job_executions row: retries, error action, run-now

MAIN = "main"
ERROR = "error"

COMPLETED = "Completed"
FAILED = "Failed"
POSTPONED = "Postponed"

# Seconds of schedule computing one claim transaction may do while holding the write lock
# (catching up a minute job missed for a month takes ~0.1 s).
DECIDE_BUDGET = 0.25

_TAGS = uuid.UUID("6f1c2a52-8a43-4f59-9d2e-3b8f5d0c7e11")
_TAGS_BYTES = _TAGS.bytes


def new_tag() -> str:
    """A random execution tag: 32 hex characters, as the live service's."""
    return uuid.uuid4().hex


def series_tag(
    job_id: int,
    schedule_set_at: datetime,
    repeat: int,
    expected: datetime,
    iso: Callable[[datetime], str] = datetime.isoformat,
) -> str:
    """The execution tag of an occurrence of a job's series: the same every time it is
    computed, so an execution replayed after a crash carries the tag of the first try.
    `iso` is `datetime.isoformat`, or a memo of it (a claim's jobs often share instants)."""
    key = f"{job_id}/{iso(schedule_set_at)}/{repeat}/{iso(expected)}"
    # uuid.uuid5(_TAGS, key).hex, without building the UUID object (a claim makes 200 of these)
    digest = bytearray(hashlib.sha1(_TAGS_BYTES + key.encode(), usedforsecurity=False).digest())
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    return digest[:16].hex()


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


async def run_pending(conn: AsyncConnection, job_id: int) -> bool:
    """Whether job row `job_id` has a run-now request no process has started yet (not claimed,
    no attempt made). A request whose first attempt was made, and is running or waits for a
    retry, does not count."""
    found = await conn.execute(
        select(job_executions.c.id)
        .where(
            job_executions.c.job_id == job_id,
            job_executions.c.kind == RUN_NOW,
            job_executions.c.phase == MAIN,
            job_executions.c.attempt == 0,
            job_executions.c.lease_owner.is_(None),
        )
        .limit(1)
    )
    return found.first() is not None


async def continues_series(conn: AsyncConnection, job_id: int, schedule_set_at: datetime) -> bool:
    """Whether an execution of the job's current series (the one set at `schedule_set_at`) is
    still to continue: a retry or the error action pending or running. Run-now requests, and
    executions of a series the job has since left, do not count."""
    rows = await conn.execute(
        select(
            job_executions.c.execution_tag,
            job_executions.c.repeat_count,
            job_executions.c.expected_at,
        ).where(job_executions.c.job_id == job_id, job_executions.c.kind != RUN_NOW)
    )
    return any(_in_series(row, job_id, schedule_set_at) for row in rows)


@dataclass(slots=True)
class JobInfo:
    """What an attempt needs from the job row (read at claim time: the current definition, its
    secrets usable once claimed)."""

    id: int
    name: str
    definition: Mapping[str, Any]
    state: str
    version: int
    subscription_id: str
    resource_group: str
    collection: str
    unreadable: str | None = None  # why the job's secrets cannot be opened: do not run it


@dataclass(slots=True)
class Claimed:
    """An execution this process holds under a lease, ready for its next attempt."""

    source: str  # JOB_ROW / RUN_ROW
    id: int  # the job's id (JOB_ROW) or the job_executions row's id (RUN_ROW)
    tag: str
    kind: str
    repeat: int
    expected: datetime
    job_version: int
    phase: str
    attempt: int
    job: JobInfo
    # JOB_ROW only: where the job's series goes once this execution is recorded.
    next_at: datetime | None = None
    next_repeat: int = 0
    series_set_at: datetime | None = None  # the series this execution belongs to

    @property
    def key(self) -> str:
        return f"{self.source}{self.id}"


@dataclass(slots=True)
class DueJob:
    """A job whose next execution is due, as read for claiming."""

    info: JobInfo
    next_execution_at: datetime
    next_repeat: int
    schedule_set_at: datetime
    in_flight: bool  # a lease had been taken (and has run out): run it, late or not


@dataclass(slots=True)
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


@dataclass(slots=True)
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
    faulted: bool = False  # with "finish": the execution faulted (its main action did)
    faults: bool = False  # this attempt faulted the execution (its main action's last one)


def _chunks(items: Sequence[Any], size: int = 500) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _continuing_version(row: Any, info: JobInfo, schedule_set_at: datetime) -> int:
    """The job version a continuing execution (retry, error action) runs and ends under. An API
    write that kept the series (its tag still matches: e.g. a PATCH correcting the action between
    retries) is adopted, so the execution still ends the job; a write that restarted the series
    is not."""
    if row.job_version != info.version and _in_series(row, info.id, schedule_set_at):
        return info.version
    return int(row.job_version)


def _in_series(row: Any, job_id: int, schedule_set_at: datetime) -> bool:
    """Whether a job_executions row (tag, repeat count, expected time) is an execution of the
    job's series set at `schedule_set_at`: its tag is the one that series gives it."""
    return bool(
        row.execution_tag == series_tag(job_id, schedule_set_at, row.repeat_count, row.expected_at)
    )


def _final_state(attempt: Attempt) -> str | None:
    """The job's state once this attempt is recorded, when it ends the series."""
    if attempt.follow != "finish" or attempt.execution.kind not in (LAST, ONCE):
        return None
    if attempt.execution.kind == ONCE and attempt.faulted:
        return "Faulted"
    return "Completed"


class Runs:
    """The engine's store operations on one database, for one engine process (`owner`)."""

    def __init__(self, db: AsyncEngine, owner: str) -> None:
        self.db = db
        self.owner = owner
        self.sqlite = db.dialect.name == "sqlite"
        self._due_jobs = _due_jobs_query(lock=not self.sqlite)
        self._due_runs = _due_runs_statement(lock=not self.sqlite)
        self._held_jobs = _held_jobs_query(lock=not self.sqlite)
        # Instants of the record statements: on SQLite bound as the stored text, converted once
        # per value; on PostgreSQL as before, through UTCDateTime.
        stamp_type: TypeEngine[Any] = String() if self.sqlite else UTCDateTime()
        self._stamp: Callable[[datetime | None], Any] = _sqlite_stamp if self.sqlite else _as_is
        self._record_first, self._record_later = _status_statements(stamp_type)
        self._insert_history = _history_insert(stamp_type)
        # See `_many`: per statement, its SQL, its constants, and a row's parameter tuple.
        self._compiled: dict[int, tuple[str, dict[str, Any], Callable[[Any], tuple[Any, ...]]]] = {}
        self.transactor = Transactor(db)

    async def close(self) -> None:
        """Let go of what the transactions run on (SQLite: the writer thread's connection)."""
        await self.transactor.close()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction (`store.db.write_transaction`: on SQLite the database's write lock
        is taken up front, under the process's one lock shared with the API)."""
        async with write_transaction(self.db) as conn:
            yield conn

    _info_columns = (
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
    def _job_info(row: Any) -> JobInfo:
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

    def _open_secrets(self, info: JobInfo) -> None:
        """The claimed job's definition with its secrets usable; only a job that has any is
        decrypted (its stored definition holds `sealed`)."""
        if SEALED not in info.definition:
            return
        try:
            info.definition = unseal_definition(info.definition, keyring_of(self.db))
        except SealError as exc:
            info.definition = without_secrets(info.definition)
            info.unreadable = (
                f"The job's secrets cannot be read by this process, so nothing was run: {exc}."
            )

    # -- claiming due jobs ----------------------------------------------------------------------

    async def claim(
        self,
        now: datetime,
        limit: int,
        lease: timedelta,
        decide: Callable[[DueJob], Made | Broken],
        horizon: datetime | None = None,
    ) -> list[Claimed]:
        """One round's claim, in one transaction: job_executions rows due now first (they are
        older: retries, error actions, run-now, abandoned work), then due jobs, `limit` in all."""

        def work(conn: Connection) -> list[Claimed]:
            claimed = self._claim_runs(conn, now, limit, lease)
            if len(claimed) < limit:
                claimed += self._claim_jobs(conn, now, limit - len(claimed), lease, decide, horizon)
            return claimed

        return await self.transactor.write(work)

    async def claim_jobs(
        self,
        now: datetime,
        limit: int,
        lease: timedelta,
        decide: Callable[[DueJob], Made | Broken],
        horizon: datetime | None = None,
    ) -> list[Claimed]:
        return await self.transactor.write(
            lambda conn: self._claim_jobs(conn, now, limit, lease, decide, horizon)
        )

    async def claim_runs(self, now: datetime, limit: int, lease: timedelta) -> list[Claimed]:
        return await self.transactor.write(lambda conn: self._claim_runs(conn, now, limit, lease))

    def _claim_jobs(
        self,
        conn: Connection,
        now: datetime,
        limit: int,
        lease: timedelta,
        decide: Callable[[DueJob], Made | Broken],
        horizon: datetime | None = None,
    ) -> list[Claimed]:
        """Claim up to `limit` jobs due by `horizon` (default: now) for their next execution,
        leased to this process.
        `decide` (pure) says which execution runs — the latest one due when executions were
        missed; those are written as Postponed history here, in the same transaction."""
        rows = (
            conn.execute(self._due_jobs, {"horizon": horizon or now, "now": now, "limit": limit})
        ).all()
        if not rows:
            return []
        made: list[Made] = []
        broken: list[Broken] = []
        deadline = time.monotonic() + DECIDE_BUDGET
        width = len(self._info_columns)  # the row starts with them, in JobInfo's order
        for row in rows:
            info = JobInfo(*row[:width])
            next_execution_at, next_repeat, schedule_set_at, lease_owner = row[width:]
            due = DueJob(
                info, next_execution_at, next_repeat, schedule_set_at, lease_owner is not None
            )
            outcome = decide(due)
            if isinstance(outcome, Made):
                made.append(outcome)
            else:
                broken.append(outcome)
            if time.monotonic() > deadline:
                break  # long catch-ups (missed executions): the rest wait for the next round
        for m in made:
            self._open_secrets(m.due.info)
        until = now + lease
        for chunk in _chunks([m.due.info.id for m in made]):
            conn.execute(_LEASE_JOBS, {"ids": chunk, "owner": self.owner, "until": until})
        self._postpone(conn, [m for m in made if m.postponed], now)
        self._fault_broken(conn, broken, now)
        iso = _memoized(_isoformat)
        return [
            Claimed(
                source=JOB_ROW,
                id=m.due.info.id,
                tag=series_tag(m.due.info.id, m.due.schedule_set_at, m.repeat, m.expected, iso),
                kind=m.kind,
                repeat=m.repeat,
                expected=m.expected,
                job_version=m.due.info.version,
                phase=MAIN,
                attempt=0,
                job=m.due.info,
                next_at=m.next_at,
                next_repeat=m.next_repeat,
                series_set_at=m.due.schedule_set_at,
            )
            for m in made
        ]

    def _postpone(self, conn: Connection, made: list[Made], now: datetime) -> None:
        """Missed executions: history says Postponed, and the job row now points at the one
        that runs (so that a replay after a crash runs that one, not the missed ones again)."""
        for m in made:
            conn.execute(
                update(jobs)
                .where(jobs.c.id == m.due.info.id)
                .values(next_execution_at=m.expected, next_repeat=m.repeat)
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
            conn.execute(insert(job_history), list(chunk))

    def _fault_broken(self, conn: Connection, broken: list[Broken], now: datetime) -> None:
        for b in broken:
            info = b.due.info
            conn.execute(
                update(jobs)
                .where(jobs.c.id == info.id)
                .values(
                    state="Faulted",
                    ended_at=now,
                    next_execution_at=None,
                    lease_owner=None,
                    lease_expires_at=None,
                )
            )
            conn.execute(
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

    # -- claiming continuing executions and run-now requests -------------------------------------

    def _claim_runs(
        self, conn: Connection, now: datetime, limit: int, lease: timedelta
    ) -> list[Claimed]:
        """Claim up to `limit` job_executions rows whose attempt is due (retries, error actions,
        run-now requests, and rows whose holder's lease ran out)."""
        taken = (
            conn.execute(
                self._due_runs,
                {"now": now, "limit": limit, "owner": self.owner, "until": now + lease},
            )
        ).all()
        if not taken:
            return []
        infos: dict[int, JobInfo] = {}
        series_set_at: dict[int, datetime] = {}
        for chunk in _chunks(sorted({t.job_id for t in taken})):
            for row in conn.execute(
                select(*self._info_columns, jobs.c.schedule_set_at)
                .join(job_collections, job_collections.c.id == jobs.c.collection_id)
                .where(jobs.c.id.in_(chunk))
            ):
                job = infos[row.id] = self._job_info(row)
                self._open_secrets(job)
                series_set_at[row.id] = row.schedule_set_at
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
                    source=RUN_ROW,
                    id=t.id,
                    tag=t.execution_tag,
                    kind=t.kind,
                    repeat=t.repeat_count,
                    expected=t.expected_at,
                    job_version=_continuing_version(t, info, series_set_at[t.job_id]),
                    phase=t.phase,
                    attempt=t.attempt,
                    job=info,
                )
            )
        for chunk in _chunks(abandoned):
            conn.execute(delete(job_executions).where(job_executions.c.id.in_(chunk)))
        return claimed

    # -- leases ---------------------------------------------------------------------------------

    async def renew(self, held: Sequence[Claimed], until: datetime) -> None:
        """Extend this process's leases on executions still running."""
        job_ids = [c.id for c in held if c.source == JOB_ROW]
        run_ids = [c.id for c in held if c.source == RUN_ROW]

        def work(conn: Connection) -> None:
            for chunk in _chunks(job_ids):
                conn.execute(
                    update(jobs)
                    .where(jobs.c.id.in_(chunk), jobs.c.lease_owner == self.owner)
                    .values(lease_expires_at=until)
                )
            for chunk in _chunks(run_ids):
                conn.execute(
                    update(job_executions)
                    .where(
                        job_executions.c.id.in_(chunk),
                        job_executions.c.lease_owner == self.owner,
                    )
                    .values(due_at=until)
                )

        await self.transactor.write(work)

    async def release(self, held: Sequence[Claimed], now: datetime) -> None:
        """Give back executions this process holds but will not finish (shutting down): their
        leases end now, so the next process runs them at once, as executions in flight."""
        await self.renew(held, now)

    async def expire_gone_leases(self, now: datetime, gone: Callable[[str], bool]) -> int:
        """End, now, the leases of owners known to be gone (`gone(owner)`), so their executions
        are taken over at once. Leased rows lie in the due range of the indexes (a job is leased
        once due; a leased row's due_at is its lease expiry), so this reads no idle job."""

        def work(conn: Connection) -> int:
            held_jobs = conn.execute(
                select(jobs.c.id, jobs.c.lease_owner).where(
                    jobs.c.next_execution_at <= now, jobs.c.lease_owner.is_not(None)
                )
            )
            job_ids = [row.id for row in held_jobs if gone(row.lease_owner)]
            held_runs = conn.execute(
                select(job_executions.c.id, job_executions.c.lease_owner).where(
                    job_executions.c.due_at > now, job_executions.c.lease_owner.is_not(None)
                )
            )
            run_ids = [row.id for row in held_runs if gone(row.lease_owner)]
            for chunk in _chunks(job_ids):
                conn.execute(update(jobs).where(jobs.c.id.in_(chunk)).values(lease_expires_at=now))
            for chunk in _chunks(run_ids):
                conn.execute(
                    update(job_executions).where(job_executions.c.id.in_(chunk)).values(due_at=now)
                )
            return len(job_ids) + len(run_ids)

        return await self.transactor.write(work)

    async def next_due(self) -> datetime | None:
        """The earliest instant new work falls due (a job's next execution that nobody holds,
        a retry, a run-now request, a lease expiry): how long the dispatcher may sleep."""

        def work(conn: Connection) -> tuple[datetime | None, datetime | None]:
            job_at = (
                conn.execute(
                    select(func.min(jobs.c.next_execution_at)).where(
                        jobs.c.next_execution_at.is_not(None), jobs.c.lease_owner.is_(None)
                    )
                )
            ).scalar()
            run_at = conn.execute(_NEXT_RUN).scalar()
            return job_at, run_at

        times = [t for t in await self.transactor.read(work) if t is not None]
        return min(times) if times else None

    # -- recording attempts ---------------------------------------------------------------------

    async def record(self, attempts: Sequence[Attempt], now: datetime) -> set[str]:
        """Write attempts in one transaction: a history entry each, the jobs' status counters,
        the executions' next steps, the series' advance and final states. Only executions this
        process still holds are written; returns their keys."""
        if not attempts:
            return set()
        return await self.transactor.write(lambda conn: self._record(conn, attempts, now))

    def _record(self, conn: Connection, attempts: Sequence[Attempt], now: datetime) -> set[str]:
        accepted = self._held(conn, attempts)
        if not accepted:
            return set()
        stamp = _memoized(self._stamp) if self.sqlite else self._stamp
        self._many(
            conn,
            self._insert_history,
            [
                {
                    "h_job": a.execution.job.id,
                    "h_tag": a.execution.tag,
                    "h_action": "MainAction" if a.execution.phase == MAIN else "ErrorAction",
                    "h_status": COMPLETED if a.succeeded else FAILED,
                    "h_retry": a.execution.attempt,
                    "h_repeat": a.execution.repeat,
                    "h_expected": stamp(a.execution.expected),
                    "h_start": stamp(a.started),
                    "h_end": stamp(a.ended),
                    "h_message": a.message,
                }
                for a in accepted
            ],
        )
        first = [a for a in accepted if a.execution.source == JOB_ROW]
        later = [a for a in accepted if a.execution.source == RUN_ROW]
        self._continue_first(conn, first, now)
        self._advance_runs(conn, later, now)
        bound_now = stamp(now)
        if first:
            self._many(
                conn,
                self._record_first,
                [
                    {
                        **_status_params(job, [a], bound_now, stamp),
                        "b_at": stamp(a.execution.expected),
                        "b_set": stamp(a.execution.series_set_at),
                    }
                    for job, a in _by_job1(first)
                ],
            )
        if later:
            self._many(
                conn,
                self._record_later,
                [_status_params(job, group, bound_now, stamp) for job, group in _by_job(later)],
            )
        return {a.execution.key for a in accepted}

    def _many(self, conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        """`conn.execute(statement, rows)` (executemany). On SQLite, where every value of the
        record statements is already what the driver takes (instants as text), the statement's
        compiled SQL goes to the driver with plain tuples, skipping SQLAlchemy's per-row
        parameter processing."""
        if not self.sqlite or not rows:
            conn.execute(statement, rows)
            return
        found = self._compiled.get(id(statement))
        if found is None:
            sql, plan = _positional(statement, conn.dialect, rows[0])
            # The statement's own constants go in each row under keys of their own, so that
            # one itemgetter (C) makes a row's parameter tuple.
            constants = {f" constant {k}": x for k, (given, x) in enumerate(plan) if not given}
            keys = [x if given else f" constant {k}" for k, (given, x) in enumerate(plan)]
            found = self._compiled[id(statement)] = (sql, constants, _tuple_of(keys))
        sql, constants, parameters = found
        if constants:
            for row in rows:
                row.update(constants)
        conn.exec_driver_sql(sql, [parameters(row) for row in rows])

    def _held(self, conn: Connection, attempts: Sequence[Attempt]) -> list[Attempt]:
        """The attempts whose execution this process still holds (its lease may have been taken
        over, or the job deleted)."""
        job_ids = sorted({a.execution.id for a in attempts if a.execution.source == JOB_ROW})
        run_ids = sorted({a.execution.id for a in attempts if a.execution.source == RUN_ROW})
        holding_jobs: set[int] = set()
        holding_runs: dict[int, tuple[str, int]] = {}
        for chunk in _chunks(job_ids):
            held = conn.execute(self._held_jobs, {"ids": chunk, "owner": self.owner})
            holding_jobs.update(held.scalars())
        for chunk in _chunks(run_ids):
            query = select(
                job_executions.c.id, job_executions.c.phase, job_executions.c.attempt
            ).where(job_executions.c.id.in_(chunk), job_executions.c.lease_owner == self.owner)
            if not self.sqlite:
                query = query.with_for_update()
            for row in conn.execute(query):
                holding_runs[row.id] = (row.phase, row.attempt)
        return [
            a
            for a in attempts
            if (a.execution.source == JOB_ROW and a.execution.id in holding_jobs)
            or (
                a.execution.source == RUN_ROW
                and holding_runs.get(a.execution.id) == (a.execution.phase, a.execution.attempt)
            )
        ]

    def _continue_first(self, conn: Connection, first: list[Attempt], now: datetime) -> None:
        """A first attempt that failed with more to come moves its execution to a row."""
        rows = [
            {
                "job_id": a.execution.job.id,
                "execution_tag": a.execution.tag,
                "kind": a.execution.kind,
                "repeat_count": a.execution.repeat,
                "expected_at": a.execution.expected,
                "job_version": a.execution.job_version,
                "phase": ERROR if a.follow == "error" else MAIN,
                "attempt": a.next_attempt if a.follow == "retry" else 0,
                "due_at": a.retry_at if a.follow == "retry" else now,
                "lease_owner": None,
                "created_at": now,
            }
            for a in first
            if a.follow != "finish"
        ]
        if rows:
            conn.execute(insert(job_executions), rows)

    def _advance_runs(self, conn: Connection, later: list[Attempt], now: datetime) -> None:
        retry = [a for a in later if a.follow == "retry"]
        error = [a for a in later if a.follow == "error"]
        finished = [a.execution.id for a in later if a.follow == "finish"]
        if retry:
            conn.execute(
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
        for chunk in _chunks([a.execution.id for a in error]):
            conn.execute(
                update(job_executions)
                .where(job_executions.c.id.in_(chunk))
                .values(phase=ERROR, attempt=0, due_at=now, lease_owner=None)
            )
        for chunk in _chunks(finished):
            conn.execute(delete(job_executions).where(job_executions.c.id.in_(chunk)))


def _by_job1(attempts: list[Attempt]) -> list[tuple[int, Attempt]]:
    """First attempts by job (one execution in flight per job row), in id order."""
    return sorted(((a.execution.job.id, a) for a in attempts), key=lambda p: p[0])


def _by_job(attempts: list[Attempt]) -> list[tuple[int, list[Attempt]]]:
    groups: dict[int, list[Attempt]] = {}
    for a in attempts:
        groups.setdefault(a.execution.job.id, []).append(a)
    return sorted(groups.items())


def _status_params(
    job_id: int, group: list[Attempt], bound_now: Any, stamp: Callable[[datetime | None], Any]
) -> dict[str, Any]:
    """Status counters: every attempt is an execution, every failed one a failure; the attempt
    that faults its execution (the main action's last allowed one failed) adds one to
    faultedCount. Instants go through `stamp`."""
    if len(group) == 1:  # the common case (a first attempt), without the generic folds
        [attempt] = group
        execution = attempt.execution
        state = _final_state(attempt)
        return {
            "b_id": job_id,
            "b_n": 1,
            "b_f": 0 if attempt.succeeded else 1,
            "b_ft": 1 if attempt.faults else 0,
            "b_t": stamp(attempt.started),
            "b_end": state,
            "b_v": execution.job_version,
            "b_next": stamp(execution.next_at),
            "b_rep": execution.next_repeat,
            "b_now": bound_now,
        }
    final = [(state, a.execution.job_version) for a in group if (state := _final_state(a))]
    head = group[0].execution
    return {
        "b_id": job_id,
        "b_n": len(group),
        "b_f": sum(0 if a.succeeded else 1 for a in group),
        "b_ft": sum(1 for a in group if a.faults),
        "b_t": stamp(max(a.started for a in group)),
        "b_end": final[-1][0] if final else None,
        "b_v": final[-1][1] if final else head.job_version,
        "b_next": stamp(head.next_at),
        "b_rep": head.next_repeat,
        "b_now": bound_now,
    }


def _status_statements(stamp: TypeEngine[Any]) -> tuple[Any, Any]:
    """The two job updates of `record`, built once per dialect (instants bound as `stamp`).

    After a first attempt (the job row held the lease): the series advances — unless the API
    redefined the job's timing meanwhile (its version moved on and the row no longer points at
    this execution of the same series; a PATCH of the action alone keeps both) — and the lease
    is cleared. A write that kept the series but took its next execution away (the job
    disabled, its collection suspended) still counts the execution in `next_repeat`, so that
    enabling the job again does not run it a second time. After a later attempt: only
    counters, and the final state when the series has nothing more to run."""
    last = jobs.c.last_execution_at
    started = bindparam("b_t", type_=stamp)
    ending = bindparam("b_end", type_=jobs.c.state.type)
    same_version = jobs.c.version == bindparam("b_v", type_=jobs.c.version.type)
    counters = {
        "execution_count": jobs.c.execution_count + bindparam("b_n"),
        "failure_count": jobs.c.failure_count + bindparam("b_f"),
        "faulted_count": jobs.c.faulted_count + bindparam("b_ft"),
        "last_execution_at": case((or_(last.is_(None), last < started), started), else_=last),
    }
    now = bindparam("b_now", type_=stamp)

    same_series = jobs.c.schedule_set_at == bindparam("b_set", type_=stamp)
    kept = or_(
        same_version,
        and_(jobs.c.next_execution_at == bindparam("b_at", type_=stamp), same_series),
    )
    enabled_ending = and_(ending.is_not(None), jobs.c.state == "Enabled")
    ends_first = and_(enabled_ending, kept)
    first = (
        update(jobs)
        .where(jobs.c.id == bindparam("b_id"))
        .values(
            **counters,
            next_execution_at=case(
                (kept, bindparam("b_next", type_=stamp)),
                else_=jobs.c.next_execution_at,
            ),
            next_repeat=case((same_series, bindparam("b_rep")), else_=jobs.c.next_repeat),
            lease_owner=None,
            lease_expires_at=None,
            state=case((ends_first, ending), else_=jobs.c.state),
            ended_at=case((ends_first, now), else_=jobs.c.ended_at),
        )
    )
    ends_later = and_(enabled_ending, same_version, jobs.c.next_execution_at.is_(None))
    later = (
        update(jobs)
        .where(jobs.c.id == bindparam("b_id"))
        .values(
            **counters,
            state=case((ends_later, ending), else_=jobs.c.state),
            ended_at=case((ends_later, now), else_=jobs.c.ended_at),
        )
    )
    return first, later


def _history_insert(stamp: TypeEngine[Any]) -> Any:
    """The history rows of `record` (instants bound as `stamp`), built once per dialect."""
    return insert(job_history).values(
        job_id=bindparam("h_job"),
        execution_tag=bindparam("h_tag"),
        action_name=bindparam("h_action"),
        status=bindparam("h_status"),
        retry_count=bindparam("h_retry"),
        repeat_count=bindparam("h_repeat"),
        expected_execution_time=bindparam("h_expected", type_=stamp),
        start_time=bindparam("h_start", type_=stamp),
        end_time=bindparam("h_end", type_=stamp),
        message=bindparam("h_message"),
    )


def _positional(
    statement: Any, dialect: Any, row: Mapping[str, Any]
) -> tuple[str, list[tuple[bool, Any]]]:
    """The statement's SQL for a positional-parameter driver, and for each placeholder either
    (True, the row's key) or (False, the constant the statement holds, as the driver takes it).
    Values given by the rows must need no conversion (their types have no bind processor)."""
    compiled = statement.compile(dialect=dialect)
    plan: list[tuple[bool, Any]] = []
    for name in compiled.positiontup or ():
        bind = compiled.binds[name]
        convert = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if name in row:
            assert convert is None, f"{name}: the driver would need a converted value"
            plan.append((True, name))
        else:
            value = bind.effective_value
            plan.append((False, convert(value) if convert is not None else value))
    return compiled.string, plan


def _tuple_of(keys: Sequence[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """The values of `keys`, in order, as a tuple (itemgetter, also for a single key)."""
    if len(keys) == 1:
        return lambda row: (row[keys[0]],)
    getter: Callable[[Mapping[str, Any]], tuple[Any, ...]] = itemgetter(*keys)
    return getter


def _sqlite_stamp(instant: datetime | None) -> str | None:
    """An instant as SQLite stores it: exactly the text `UTCDateTime` binds there (naive UTC,
    `YYYY-MM-DD HH:MM:SS.ffffff`), computed once per value rather than once per placeholder
    (the job update repeats some parameters four times)."""
    if instant is None:
        return None
    if instant.tzinfo is not UTC:
        if instant.tzinfo is None:
            raise ValueError("naive datetime given to a UTCDateTime column")
        instant = instant.astimezone(UTC)
    return instant.isoformat(" ", "microseconds")[:26]  # without "+00:00"


def _memoized(
    stamp: Callable[[datetime | None], Any],
) -> Callable[[datetime | None], Any]:
    """`stamp` converting each distinct instant once (a batch repeats many: the due time of
    jobs due together, the series' start, an attempt's start in both statements)."""
    seen: dict[datetime, Any] = {}

    def once(instant: datetime | None) -> Any:
        if instant is None:
            return None
        found = seen.get(instant)
        if found is None:
            found = seen[instant] = stamp(instant)
        return found

    return once


def _isoformat(instant: datetime | None) -> str | None:
    return None if instant is None else instant.isoformat()


def _as_is(instant: datetime | None) -> datetime | None:
    return instant


def _due_jobs_query(lock: bool) -> Any:
    """Due jobs with what an attempt needs, oldest first (built once: a claim runs it every
    round). `lock`: PostgreSQL's `FOR UPDATE OF jobs SKIP LOCKED`."""
    query = (
        select(
            *Runs._info_columns,
            jobs.c.next_execution_at,
            jobs.c.next_repeat,
            jobs.c.schedule_set_at,
            jobs.c.lease_owner,
        )
        .join(job_collections, job_collections.c.id == jobs.c.collection_id)
        .where(
            jobs.c.next_execution_at <= bindparam("horizon", type_=jobs.c.next_execution_at.type),
            jobs.c.state == "Enabled",
            job_collections.c.state == "Enabled",
            or_(
                jobs.c.lease_owner.is_(None),
                jobs.c.lease_expires_at <= bindparam("now", type_=jobs.c.lease_expires_at.type),
            ),
        )
        .order_by(jobs.c.next_execution_at)
        .limit(bindparam("limit", type_=Integer()))
    )
    if lock:
        query = query.with_for_update(skip_locked=True, of=jobs)
    return query


def _due_runs_statement(lock: bool) -> Any:
    """Lease job_executions rows due now, oldest first, returning them (built once: every
    claim round runs it). `lock`: PostgreSQL's `FOR UPDATE SKIP LOCKED` on the candidates."""
    candidates = (
        select(job_executions.c.id)
        .where(
            job_executions.c.due_at <= bindparam("now", type_=job_executions.c.due_at.type),
            _collection_enabled(job_executions.c.job_id),
        )
        .order_by(job_executions.c.due_at)
        .limit(bindparam("limit", type_=Integer()))
    )
    if lock:
        candidates = candidates.with_for_update(skip_locked=True)
    return (
        update(job_executions)
        .where(job_executions.c.id.in_(candidates.scalar_subquery()))
        .values(
            lease_owner=bindparam("owner", type_=job_executions.c.lease_owner.type),
            due_at=bindparam("until", type_=job_executions.c.due_at.type),
        )
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


def _collection_enabled(job_id: Any) -> Any:
    """Whether the collection of job `job_id` (a column) is Enabled: a Suspended or Disabled
    collection runs nothing of its jobs, pending retries, error actions and run-now requests
    included; they wait, still due, until it is enabled again (one primary-key lookup in
    `jobs` and one in `job_collections` per row)."""
    return (
        select(job_collections.c.id)
        .join(jobs, jobs.c.collection_id == job_collections.c.id)
        .where(jobs.c.id == job_id, job_collections.c.state == "Enabled")
        .exists()
    )


def _held_jobs_query(lock: bool) -> Any:
    """Which of the jobs `ids` this process still holds (built once: every record runs it)."""
    query = select(jobs.c.id).where(
        jobs.c.id.in_(bindparam("ids", expanding=True)),
        jobs.c.lease_owner == bindparam("owner", type_=jobs.c.lease_owner.type),
    )
    return query.with_for_update() if lock else query


# Lease due jobs to this process.
_LEASE_JOBS = (
    update(jobs)
    .where(jobs.c.id.in_(bindparam("ids", expanding=True)))
    .values(
        lease_owner=bindparam("owner", type_=jobs.c.lease_owner.type),
        lease_expires_at=bindparam("until", type_=jobs.c.lease_expires_at.type),
    )
)


# The earliest job_executions row that can be claimed (its collection Enabled), by due_at.
_NEXT_RUN = (
    select(job_executions.c.due_at)
    .where(_collection_enabled(job_executions.c.job_id))
    .order_by(job_executions.c.due_at)
    .limit(1)
)
