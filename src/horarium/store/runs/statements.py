"""The engine's SQL, named and built once per database (`RunDialect`): what a claim, a lease
renewal and a record run."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Integer,
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
from sqlalchemy.sql.elements import BindParameter

from horarium.model.enums import CollectionState, JobState
from horarium.store.core.schema import (
    collection_stopped,
    job_collections,
    job_executions,
    job_history,
    jobs,
)
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.flow import FlowStatements
from horarium.store.runs.id_lists import in_ids
from horarium.store.runs.vocabulary import Phase

# What an attempt needs from the job row, in `JobInfo`'s order.
JOB_INFO = (
    jobs.c.id,
    jobs.c.name,
    jobs.c.definition,
    jobs.c.state,
    jobs.c.version,
    job_collections.c.subscription_id,
    job_collections.c.resource_group,
    job_collections.c.name.label("collection"),
    jobs.c.collection_id,
    job_collections.c.notify_events,
)

# A history row as a record writes it: column -> the key of its value in the row's parameters.
HISTORY_ENTRY = {
    "job_id": "entry_job",
    "execution_tag": "entry_tag",
    "action_name": "entry_action",
    "status": "entry_status",
    "retry_count": "entry_retry",
    "repeat_count": "entry_repeat",
    "expected_execution_time": "entry_expected",
    "start_time": "entry_start",
    "end_time": "entry_end",
    "message": "entry_message",
}
_INSTANTS = ("expected_execution_time", "start_time", "end_time")

_OWNER = bindparam("owner", type_=jobs.c.lease_owner.type)
_NOW = bindparam("now", type_=jobs.c.lease_expires_at.type)
_UNTIL = bindparam("until", type_=jobs.c.lease_expires_at.type)
_LIMIT = bindparam("limit", type_=Integer())
# Collections this process may be given nothing more of (`Shares.full`): never empty
# (`NO_COLLECTION` stands for none), so that the statement keeps one plan.
_FULL: BindParameter[Any] = bindparam("full", expanding=True)
NO_COLLECTION = 0  # no collection has this id


class Statements:
    """Every statement of the engine's store, for one database."""

    def __init__(self, dialect: RunDialect) -> None:
        self.dialect = dialect
        self._claims(dialect)
        self._leases()
        self._records(dialect)
        self.flow = FlowStatements(dialect)  # executionPolicy (Horarium)

    def _claims(self, dialect: RunDialect) -> None:
        # Due jobs with what an attempt needs, oldest first.
        self.due_jobs = (
            _due_jobs_then_collections(dialect)
            if dialect.due_jobs_before_collections
            else _due_jobs_joined(dialect)
        )
        self.lease_jobs = (
            update(jobs)
            .where(in_ids(jobs.c.id))
            .values(lease_owner=_OWNER, lease_expires_at=_UNTIL)
        )
        # Missed executions: the job row points at the one that runs instead.
        self.skip_to = (
            update(jobs)
            .where(jobs.c.id == bindparam("job"))
            .values(
                next_execution_at=bindparam("runs_at", type_=jobs.c.next_execution_at.type),
                next_repeat=bindparam("runs_repeat"),
            )
        )
        # A job whose schedule cannot be computed.
        self.fault_job = (
            update(jobs)
            .where(jobs.c.id == bindparam("job"))
            .values(
                state=JobState.FAULTED,
                ended_at=_NOW,
                next_execution_at=None,
                lease_owner=None,
                lease_expires_at=None,
            )
        )
        # job_executions rows due now, oldest first, with their collection (locked: the claim
        # leases those its collection may be given).
        self.due_runs = dialect.lock(
            select(job_executions.c.id, jobs.c.collection_id)
            .join(jobs, jobs.c.id == job_executions.c.job_id)
            .join(job_collections, job_collections.c.id == jobs.c.collection_id)
            .where(
                job_executions.c.due_at <= _NOW,
                job_collections.c.state == CollectionState.ENABLED,
                jobs.c.collection_id.not_in(_FULL),
            )
            .order_by(job_executions.c.due_at)
            .limit(_LIMIT),
            skip_locked=True,
            of=job_executions,
        )
        self.lease_runs = (
            update(job_executions)
            .where(in_ids(job_executions.c.id))
            .values(lease_owner=_OWNER, due_at=_UNTIL)
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
        self.jobs_of_runs = (
            select(*JOB_INFO, jobs.c.schedule_set_at)
            .join(job_collections, job_collections.c.id == jobs.c.collection_id)
            .where(in_ids(jobs.c.id))
        )
        self.drop_runs = delete(job_executions).where(in_ids(job_executions.c.id))

    def _leases(self) -> None:
        # Locks first, in id order, then the update (`UPDATE … WHERE id IN (…)` alone locks in
        # whatever order its plan visits the rows; docs/engine.md, "Lock order").
        dialect = self.dialect
        own_jobs = (
            select(jobs.c.id)
            .where(in_ids(jobs.c.id), jobs.c.lease_owner == _OWNER)
            .order_by(jobs.c.id)
        )
        own_runs = (
            select(job_executions.c.id)
            .where(in_ids(job_executions.c.id), job_executions.c.lease_owner == _OWNER)
            .order_by(job_executions.c.id)
        )
        self.own_jobs = dialect.lock(own_jobs)
        self.own_runs = dialect.lock(own_runs)
        # A renewal passes over rows another transaction holds (this process's record of them
        # under way, an API write): it never waits, and the next renewal comes a third of a
        # lease later.
        self.free_own_jobs = dialect.lock(own_jobs, skip_locked=True)
        self.free_own_runs = dialect.lock(own_runs, skip_locked=True)
        owners: BindParameter[Any] = bindparam("owners", expanding=True)
        self.jobs_held_by = dialect.lock(
            select(jobs.c.id)
            .where(in_ids(jobs.c.id), jobs.c.lease_owner.in_(owners))
            .order_by(jobs.c.id)
        )
        self.runs_held_by = dialect.lock(
            select(job_executions.c.id)
            .where(in_ids(job_executions.c.id), job_executions.c.lease_owner.in_(owners))
            .order_by(job_executions.c.id)
        )
        self.renew_jobs = (
            update(jobs)
            .where(in_ids(jobs.c.id), jobs.c.lease_owner == _OWNER)
            .values(lease_expires_at=_UNTIL)
        )
        self.renew_runs = (
            update(job_executions)
            .where(in_ids(job_executions.c.id), job_executions.c.lease_owner == _OWNER)
            .values(due_at=_UNTIL)
        )
        # Leased rows lie in the due range of the indexes (a job is leased once due; a leased
        # row's due_at is its lease expiry): these read no idle job.
        self.leased_jobs = select(jobs.c.id, jobs.c.lease_owner).where(
            jobs.c.next_execution_at <= _NOW, jobs.c.lease_owner.is_not(None)
        )
        self.leased_runs = select(job_executions.c.id, job_executions.c.lease_owner).where(
            job_executions.c.due_at > _NOW, job_executions.c.lease_owner.is_not(None)
        )
        self.expire_jobs = update(jobs).where(in_ids(jobs.c.id)).values(lease_expires_at=_NOW)
        self.expire_runs = (
            update(job_executions).where(in_ids(job_executions.c.id)).values(due_at=_NOW)
        )
        self.next_job = select(func.min(jobs.c.next_execution_at)).where(
            jobs.c.next_execution_at.is_not(None),
            jobs.c.lease_owner.is_(None),
            jobs.c.collection_id.not_in(_FULL),
        )
        # The earliest job_executions row that can be claimed (its collection Enabled and not
        # full).
        self.next_run = (
            select(job_executions.c.due_at)
            .join(jobs, jobs.c.id == job_executions.c.job_id)
            .join(job_collections, job_collections.c.id == jobs.c.collection_id)
            .where(
                job_collections.c.state == CollectionState.ENABLED,
                jobs.c.collection_id.not_in(_FULL),
            )
            .order_by(job_executions.c.due_at)
            .limit(1)
        )

    def _records(self, dialect: RunDialect) -> None:
        # Every job row a record writes (first attempts' and later attempts' alike), then every
        # job_executions row, each in id order: the lock order of docs/engine.md.
        self.lock_jobs = dialect.lock(
            select(jobs.c.id, jobs.c.lease_owner).where(in_ids(jobs.c.id)).order_by(jobs.c.id)
        )
        self.held_runs = dialect.lock(
            select(job_executions.c.id, job_executions.c.phase, job_executions.c.attempt)
            .where(in_ids(job_executions.c.id), job_executions.c.lease_owner == _OWNER)
            .order_by(job_executions.c.id)
        )
        stamp = dialect.stamp_type()
        self.insert_history = insert(job_history).values(
            {
                column: bindparam(key, type_=stamp if column in _INSTANTS else None)
                for column, key in HISTORY_ENTRY.items()
            }
        )
        self.after_first, self.after_later = _status_updates(stamp)
        self.insert_runs = insert(job_executions)
        self.retry_runs = (
            update(job_executions)
            .where(job_executions.c.id == bindparam("run"))
            .values(
                attempt=bindparam("next_attempt"),
                due_at=bindparam("retry_at", type_=job_executions.c.due_at.type),
                lease_owner=None,
            )
        )
        self.start_error_actions = (
            update(job_executions)
            .where(in_ids(job_executions.c.id))
            .values(phase=Phase.ERROR, attempt=0, due_at=_NOW, lease_owner=None)
        )


_DUE = and_(
    jobs.c.next_execution_at <= bindparam("horizon", type_=jobs.c.next_execution_at.type),
    jobs.c.state == JobState.ENABLED,
    or_(jobs.c.lease_owner.is_(None), jobs.c.lease_expires_at <= _NOW),
    jobs.c.collection_id.not_in(_FULL),
)
_DUE_TAIL = (
    jobs.c.next_execution_at,
    jobs.c.next_repeat,
    jobs.c.schedule_set_at,
    jobs.c.lease_owner,
)


def _due_jobs_joined(dialect: RunDialect) -> Any:
    """Due jobs of Enabled collections joined to their collection in one SELECT."""
    return dialect.lock(
        select(*JOB_INFO, *_DUE_TAIL)
        .join(job_collections, job_collections.c.id == jobs.c.collection_id)
        .where(_DUE, job_collections.c.state == CollectionState.ENABLED)
        .order_by(jobs.c.next_execution_at)
        .limit(_LIMIT),
        skip_locked=True,
        of=jobs,
    )


def _due_jobs_then_collections(dialect: RunDialect) -> Any:
    """The same rows: the due jobs chosen from `jobs` (index order, LIMIT, locked), then their
    collections joined to the chosen ones only."""
    stopped = collection_stopped()
    chosen = dialect.lock(
        select(
            jobs.c.id,
            jobs.c.collection_id,
            jobs.c.name,
            jobs.c.definition,
            jobs.c.state,
            jobs.c.version,
            *_DUE_TAIL,
        )
        .where(_DUE, ~stopped)
        .order_by(jobs.c.next_execution_at)
        .limit(_LIMIT),
        skip_locked=True,
        of=jobs,
    ).subquery("due")
    c = job_collections.c
    return (
        select(
            chosen.c.id,
            chosen.c.name,
            chosen.c.definition,
            chosen.c.state,
            chosen.c.version,
            c.subscription_id,
            c.resource_group,
            c.name.label("collection"),
            chosen.c.collection_id,
            c.notify_events,
            chosen.c.next_execution_at,
            chosen.c.next_repeat,
            chosen.c.schedule_set_at,
            chosen.c.lease_owner,
        )
        .join_from(chosen, job_collections, c.id == chosen.c.collection_id)
        .order_by(chosen.c.next_execution_at)
    )


def _status_updates(stamp: Any) -> tuple[Any, Any]:
    """The two job updates of a record (instants bound as `stamp`).

    After a first attempt (the job row held the lease): the series advances — unless the API
    redefined the job's timing meanwhile (its version moved on and the row no longer points at
    this execution of the same series; a PATCH of the action alone keeps both) — and the lease
    is cleared. A write that kept the series but took its next execution away (the job
    disabled, its collection suspended) still counts the execution in `next_repeat`, so that
    enabling the job again does not run it a second time. After a later attempt: only
    counters, and the final state when the series has nothing more to run."""
    last = jobs.c.last_execution_at
    started = bindparam("started", type_=stamp)
    ending = bindparam("final_state", type_=jobs.c.state.type)
    same_version = jobs.c.version == bindparam("read_version", type_=jobs.c.version.type)
    counters = {
        "execution_count": jobs.c.execution_count + bindparam("executions"),
        "failure_count": jobs.c.failure_count + bindparam("failures"),
        "faulted_count": jobs.c.faulted_count + bindparam("faults"),
        "last_execution_at": case((or_(last.is_(None), last < started), started), else_=last),
    }
    now = bindparam("recorded_at", type_=stamp)

    same_series = jobs.c.schedule_set_at == bindparam("series_set_at", type_=stamp)
    kept = or_(
        same_version,
        and_(jobs.c.next_execution_at == bindparam("expected", type_=stamp), same_series),
    )
    enabled_ending = and_(ending.is_not(None), jobs.c.state == JobState.ENABLED)
    ends_first = and_(enabled_ending, kept)
    first = (
        update(jobs)
        .where(jobs.c.id == bindparam("job"))
        .values(
            **counters,
            next_execution_at=case(
                (kept, bindparam("next_at", type_=stamp)), else_=jobs.c.next_execution_at
            ),
            next_repeat=case((same_series, bindparam("following")), else_=jobs.c.next_repeat),
            lease_owner=None,
            lease_expires_at=None,
            state=case((ends_first, ending), else_=jobs.c.state),
            ended_at=case((ends_first, now), else_=jobs.c.ended_at),
        )
    )
    ends_later = and_(enabled_ending, same_version, jobs.c.next_execution_at.is_(None))
    later = (
        update(jobs)
        .where(jobs.c.id == bindparam("job"))
        .values(
            **counters,
            state=case((ends_later, ending), else_=jobs.c.state),
            ended_at=case((ends_later, now), else_=jobs.c.ended_at),
        )
    )
    return first, later
