"""Deciding, for each due job, which execution runs, what comes next and what was missed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from horarium.engine import telemetry
from horarium.engine.plans import Plans
from horarium.engine.schedule import Advance, advance
from horarium.store.runs.vocabulary import (
    Decision,
    DueJob,
    ExecutionKind,
    FaultJob,
    RunExecution,
)

# At most this many Postponed entries are written for one gap: history keeps no more per job.
POSTPONED_CAP = 1000


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def postponed_message(ran: datetime, unrecorded: int) -> Callable[[datetime, int], str]:
    """History message of a missed execution (the `index`-th written, oldest first)."""

    def message(expected: datetime, index: int) -> str:
        text = (
            f"Postponed: the execution expected at {_iso(expected)} was missed (the service "
            f"was not running or was overloaded); the execution expected at {_iso(ran)} ran "
            "in its place."
        )
        if index == 0 and unrecorded:
            text += (
                f" {unrecorded} earlier missed executions are not listed "
                f"(history keeps the last {POSTPONED_CAP})."
            )
        return text

    return message


class Decider:
    """The pure decision a claim makes for each due job (it runs inside the claim's
    transaction, on SQLite on the store's writer thread)."""

    def __init__(self, plans: Plans, grace: timedelta) -> None:
        self._plans = plans
        self._grace = grace

    def at(self, now: datetime) -> Callable[[DueJob], Decision]:
        """`decide` for a claim made at `now`."""
        return lambda due: self.decide(due, now)

    def decide(self, due: DueJob, now: datetime) -> Decision:
        info = due.info
        telemetry.claimed(due)
        try:
            series = self._plans.get(info.id, info.version, due.schedule_set_at, info.definition)
            # An execution already in flight when its holder died runs, however late it is.
            grace = timedelta.max if due.in_flight else self._grace
            step = advance(
                series, due.next_execution_at, due.next_repeat, now, grace, POSTPONED_CAP
            )
        except Exception as exc:  # a stored schedule the recurrence engine refuses
            telemetry.schedule_broken(due, exc)
            return FaultJob(due, f"The job's schedule cannot be computed: {exc}")
        return self._run(due, step, recurring=series.recurring)

    def _run(self, due: DueJob, step: Advance, recurring: bool) -> RunExecution:
        if not recurring:
            kind = ExecutionKind.ONCE
        else:
            kind = ExecutionKind.LAST if step.last else ExecutionKind.SCHEDULED
        if step.postponed:
            telemetry.postponed(due.info, step)
        return RunExecution(
            due=due,
            kind=kind,
            repeat=step.run.repeat,
            expected=step.run.expected,
            next_at=step.next_at,
            next_repeat=step.next_repeat,
            postponed=[(o.expected, o.repeat) for o in step.postponed],
            postponed_message=postponed_message(step.run.expected, step.postponed_unrecorded)
            if step.postponed
            else None,
        )
