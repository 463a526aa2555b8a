"""The words the engine and its store share: what a claimed execution is, what an attempt
decided, and the states they move through."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from horarium.model.execution_policy import ExecutionPolicy, policy_of


class ExecutionKind(StrEnum):
    """What finishing an execution does to its job's state."""

    SCHEDULED = "scheduled"  # of a recurring series with more to come: nothing
    LAST = "last"  # the last of a recurring series: Completed
    ONCE = "once"  # a one-time job's: Completed, or Faulted when it faulted
    RUN_NOW = "run_now"  # POST …/run: outside the series, never changes the state
    BACKFILL = "backfill"  # POST …/backfill: a past occurrence run again, never changes it


class Outcome(StrEnum):
    """What a claim does with a due job's execution (`executionPolicy`, Horarium)."""

    RUN = "run"  # lease the job row and run it
    SKIP = "skip"  # overlap Skip: history says Skipped, not run
    BUFFER = "buffer"  # overlap BufferOne: queued to run once the previous execution ends
    NONE = "none"  # missed Skip (or nothing left in the catch-up window): only Postponed


class Source(StrEnum):
    """Where a claimed execution is held while it runs."""

    JOB_ROW = "job"  # a first attempt, leased on the job row
    RUN_ROW = "run"  # a job_executions row: retries, the error action, run-now


class Phase(StrEnum):
    """Which of the job's actions an attempt runs."""

    MAIN = "main"
    ERROR = "error"

    @property
    def action_name(self) -> str:
        """The history's `actionName`."""
        return "MainAction" if self is Phase.MAIN else "ErrorAction"


# The steps that can follow an attempt (decided by `horarium.engine.policy`).
@dataclass(frozen=True)
class Retry:
    """Try the same action again after `delay`; `attempt` is the next retryCount."""

    attempt: int
    delay: timedelta


@dataclass(frozen=True)
class StartErrorAction:
    """Every main attempt failed: run the error action now."""


@dataclass(frozen=True)
class Finish:
    """The execution is over. Faulted: its main action failed its last allowed attempt (the
    error action, if it ran, does not change that)."""

    faulted: bool


Step = Retry | StartErrorAction | Finish


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
    collection_id: int
    notify: int = 0  # the events its collection notifies (`model.notifications.BITS`)
    unreadable: str | None = None  # why the job's secrets cannot be opened: do not run it
    policy: ExecutionPolicy = field(init=False)  # its `executionPolicy`, read once

    def __post_init__(self) -> None:
        self.policy = policy_of(self.definition)


class Shares(Protocol):
    """What one claim may give each collection (`horarium.engine.slots.Budget`). The claim
    passes over the work of the collections `full` names, and leases an execution only when
    `take` counts it (what is taken counts at once: a collection may fill up during the
    claim). Work left stays due, for a later claim or another process."""

    def full(self) -> list[int]:
        """The collections that may be given nothing more."""
        ...

    def take(self, collection_id: int) -> bool:
        """Count one execution of the collection, if it may be given one."""
        ...


@dataclass(slots=True)
class Claimed:
    """An execution this process holds under a lease, ready for its next attempt."""

    source: Source
    run_id: int | None  # the job_executions row (RUN_ROW); None for a first attempt (JOB_ROW)
    tag: str
    kind: ExecutionKind
    repeat: int
    expected: datetime
    job_version: int
    phase: Phase
    attempt: int
    job: JobInfo
    # JOB_ROW only: where the job's series goes once this execution is recorded.
    next_at: datetime | None = None
    next_repeat: int = 0
    series_set_at: datetime | None = None  # the series this execution belongs to
    key: str = field(init=False)  # unique among the executions held at one time

    def __post_init__(self) -> None:
        self.key = f"job{self.job.id}" if self.run_id is None else f"run{self.run_id}"


@dataclass(slots=True)
class DueJob:
    """A job whose next execution is due, as read for claiming."""

    info: JobInfo
    next_execution_at: datetime
    next_repeat: int
    schedule_set_at: datetime
    in_flight: bool  # a lease had been taken (and has run out): run it, late or not
    # Jobs whose executions must not overlap: the expected time of an unfinished previous
    # execution (None: none), and whether an execution already waits for it to end.
    previous: datetime | None = None
    buffered: bool = False


@dataclass(slots=True)
class RunExecution:
    """Decided for a due job: run this execution; the job's series then points at `next_at`.
    Executions missed before it are recorded as Postponed."""

    due: DueJob
    kind: ExecutionKind  # SCHEDULED / LAST / ONCE
    repeat: int
    expected: datetime
    next_at: datetime | None
    next_repeat: int
    postponed: Sequence[tuple[datetime, int]] = ()  # (expected, repeatCount), oldest first
    postponed_message: Callable[[datetime, int], str] | None = None
    outcome: Outcome = Outcome.RUN
    reason: str = ""  # Skipped: the history message


@dataclass(frozen=True)
class FaultJob:
    """Decided for a due job whose stored schedule cannot be computed: it faults with this
    message."""

    due: DueJob
    message: str


Decision = RunExecution | FaultJob


@dataclass(slots=True)
class Attempt:
    """One finished attempt and the step that follows it, for the store to record."""

    execution: Claimed
    started: datetime
    ended: datetime
    succeeded: bool
    message: str
    step: Step
    faults: bool = False  # this attempt faulted the execution (its main action's last one)

    @property
    def history_message(self) -> str:
        """The message history (and a notification) shows: the action's, marked for a backfill
        execution."""
        if self.execution.kind == ExecutionKind.BACKFILL:
            return f"Backfill: {self.message}"
        return self.message

    @property
    def retry_at(self) -> datetime | None:
        """When the retry is due, when the step is a retry."""
        return self.ended + self.step.delay if isinstance(self.step, Retry) else None
