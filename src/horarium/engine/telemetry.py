"""What the engine reports about executions: Prometheus metrics (`horarium.observe.metrics`) and
log events on logger `horarium.executions` — one event for each attempt that failed, each
execution that faulted, was postponed or was taken over from another process; a success only at
DEBUG, so that thousands of executions a second do not become as many log lines.

Called from the engine's hot path (`attempts_ended` once per batch the recorder takes): the
metrics' children are bound once per kind of attempt, counters are added to once per kind in a
batch, and an event's fields are built only when its level is logged.
Events and their fields: docs/operations.md."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from prometheus_client import Counter, Histogram

from horarium.engine.schedule import Advance
from horarium.logs import event
from horarium.observe import metrics
from horarium.store.runs.vocabulary import (
    Attempt,
    DueJob,
    ExecutionKind,
    Finish,
    JobInfo,
    Outcome,
    Phase,
    Retry,
    RunExecution,
    StartErrorAction,
    Step,
)

log = logging.getLogger("horarium.executions")

MESSAGE_CHARS = 500  # an event carries the start of the history message


@dataclass(frozen=True, slots=True, eq=False)
class _Kind:
    """The series one kind of attempt counts into, and the event it logs (one per kind: it
    hashes by identity)."""

    attempts: Counter
    duration: Histogram
    execution: Counter | None  # the execution ended
    backfill: Counter | None  # the execution ended, and it is a backfill one
    retry: Counter | None  # a retry follows
    event: str
    level: int


# (main action type, phase, error action type, succeeded, the step that follows, faulted,
# a backfill execution)
_KindKey = tuple[str, Phase, str, bool, type[Step], bool, bool]
_kinds: dict[_KindKey, _Kind] = {}


def _kind(key: _KindKey) -> _Kind:
    main_type, phase, error_type, succeeded, follows, faulted, backfill = key
    run_type = error_type if phase is Phase.ERROR else main_type
    outcome = "succeeded" if succeeded else "failed"
    ended: str | None = None  # the execution's outcome, when it ended
    if follows is Finish and faulted:
        ended = "faulted"
    elif follows is Finish:
        ended = "succeeded" if phase is Phase.MAIN else "error_action_succeeded"
    if succeeded:
        name, level = "execution.succeeded", logging.DEBUG
        if phase is Phase.ERROR:
            name, level = "execution.error_action_succeeded", logging.WARNING
    elif follows is Retry:
        name, level = "execution.retrying", logging.WARNING
    elif follows is StartErrorAction:
        name, level = "execution.main_action_failed", logging.WARNING
    else:
        name, level = "execution.faulted", logging.ERROR
    kind = _Kind(
        attempts=metrics.ATTEMPTS.labels(run_type, phase, outcome),
        duration=metrics.ACTION_DURATION.labels(run_type, outcome),
        execution=metrics.EXECUTIONS.labels(main_type, ended) if ended else None,
        backfill=metrics.BACKFILL_EXECUTIONS.labels(ended) if ended and backfill else None,
        retry=metrics.RETRIES.labels(run_type, phase) if follows is Retry else None,
        event=name,
        level=level,
    )
    _kinds[key] = kind
    return kind


def _kind_of(attempt: Attempt) -> tuple[_Kind, str]:
    """The kind of `attempt`, and the type of the action it ran."""
    execution = attempt.execution
    action: Mapping[str, Any] = execution.job.definition.get("action") or {}
    main_type = metrics.action_type(action.get("type"))
    phase = execution.phase
    error_type = ""
    if phase is Phase.ERROR:
        error_type = metrics.action_type((action.get("errorAction") or {}).get("type"))
    step = attempt.step
    faulted = isinstance(step, Finish) and step.faulted
    backfill = execution.kind == ExecutionKind.BACKFILL
    key = (main_type, phase, error_type, attempt.succeeded, type(step), faulted, backfill)
    return _kinds.get(key) or _kind(key), error_type or main_type


def attempts_ended(attempts: Sequence[Attempt]) -> None:
    """Count finished attempts (and the executions that ended) and log their events. The
    counters are added to once per kind of attempt in `attempts`; each attempt's duration and
    (a first attempt's) start lag are observed."""
    counts: dict[_Kind, int] = {}
    for attempt in attempts:
        kind, run_type = _kind_of(attempt)
        counts[kind] = counts.get(kind, 0) + 1
        duration = (attempt.ended - attempt.started).total_seconds()
        kind.duration.observe(duration)
        execution = attempt.execution
        lag = (attempt.started - execution.expected).total_seconds()
        if execution.attempt == 0 and execution.phase is Phase.MAIN:
            metrics.START_LAG.observe(lag if lag > 0 else 0.0)
        if log.isEnabledFor(kind.level):
            _log_attempt(attempt, kind, run_type, lag, duration)
    for kind, count in counts.items():
        kind.attempts.inc(count)
        for counter in (kind.execution, kind.backfill, kind.retry):
            if counter is not None:
                counter.inc(count)


def _log_attempt(attempt: Attempt, kind: _Kind, run_type: str, lag: float, duration: float) -> None:
    execution = attempt.execution
    fields = _job_fields(execution.job)
    fields.update(
        execution_tag=execution.tag,
        action=execution.phase.action_name,
        action_type=run_type,
        attempt=execution.attempt,
        outcome="succeeded" if attempt.succeeded else "failed",
        expected=_iso(execution.expected),
        lag=round(lag, 6),
        duration=round(duration, 6),
        message=attempt.message[:MESSAGE_CHARS],
    )
    if attempt.retry_at is not None:
        fields["retry_at"] = _iso(attempt.retry_at)
    event(log, kind.level, kind.event, **fields)


def claimed(due: DueJob) -> None:
    """A due job is being claimed; when another process's lease on it had run out (or been
    handed back), its execution is taken over."""
    if due.in_flight:
        metrics.LEASE_TAKEOVERS.inc()
        event(
            log,
            logging.INFO,
            "execution.taken_over",
            **_job_fields(due.info),
            expected=_iso(due.next_execution_at),
        )


def postponed(info: JobInfo, step: Advance) -> None:
    """Executions of a job were missed: those the job's executionPolicy.missed does not run
    (by default all but the latest) are Postponed."""
    missed = len(step.postponed) + step.postponed_unrecorded
    metrics.POSTPONED.inc(missed)
    event(
        log,
        logging.WARNING,
        "execution.postponed",
        **_job_fields(info),
        missed=missed,
        first_missed=_iso(step.postponed[0].expected) if step.postponed else None,
        last_missed=_iso(step.postponed[-1].expected) if step.postponed else None,
        runs=_iso(step.run.expected) if step.runs else None,
    )


def passed_over(decision: RunExecution) -> None:
    """A due execution of a job whose executions must not overlap was skipped or buffered."""
    if decision.outcome is Outcome.SKIP:
        metrics.SKIPPED.inc()
    elif decision.outcome is Outcome.BUFFER:
        metrics.BUFFERED.inc()


def schedule_broken(due: DueJob, error: Exception) -> None:
    """A due job's stored schedule cannot be computed: the job faults."""
    action: Mapping[str, Any] = due.info.definition.get("action") or {}
    metrics.EXECUTIONS.labels(metrics.action_type(action.get("type")), "faulted").inc()
    event(
        log,
        logging.ERROR,
        "execution.faulted",
        **_job_fields(due.info),
        expected=_iso(due.next_execution_at),
        message=f"The job's schedule cannot be computed: {error}"[:MESSAGE_CHARS],
    )


def _job_fields(job: JobInfo) -> dict[str, Any]:
    return {
        "job": job.name,
        "collection": job.collection,
        "resource_group": job.resource_group,
        "subscription": job.subscription_id,
    }


def _iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")
