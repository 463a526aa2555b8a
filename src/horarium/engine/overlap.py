"""Overlapping executions under a job's `executionPolicy.overlap` (pure): an execution that falls
due while the job's previous one is unfinished (its first attempt, a retry or its error action
pending or running) runs anyway (`Allow`, the default), is not run (`Skip`: history says
Skipped), or waits for the previous one to end (`BufferOne`; a further one meanwhile is
skipped). The claim finds the previous execution (`DueJob.previous`) in its transaction."""

from __future__ import annotations

from datetime import datetime

from horarium.model.execution_policy import OVERLAP_BUFFER_ONE, ExecutionPolicy
from horarium.store.runs.vocabulary import DueJob, Outcome


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def overlap_outcome(
    due: DueJob, policy: ExecutionPolicy, expected: datetime
) -> tuple[Outcome, str]:
    """What happens to the job's execution expected at `expected`, and the history message
    when it is skipped."""
    if due.previous is None:
        return Outcome.RUN, ""
    if policy.overlap == OVERLAP_BUFFER_ONE and not due.buffered:
        return Outcome.BUFFER, ""
    waiting = " and another one already waits for it" if due.buffered else ""
    return Outcome.SKIP, (
        f"Skipped: the execution expected at {_iso(expected)} fell due while the job's"
        f" previous execution (expected at {_iso(due.previous)}) was unfinished{waiting};"
        f" the job's executionPolicy.overlap is {policy.overlap}."
    )
