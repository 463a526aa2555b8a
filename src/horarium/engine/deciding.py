"""Deciding, for each due job, which execution runs, what comes next and what was missed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from horarium.engine import telemetry
from horarium.engine.missed import advance_by_policy
from horarium.engine.overlap import overlap_outcome
from horarium.engine.plans import Plans
from horarium.engine.schedule import Advance, advance
from horarium.model.durations import format_timespan
from horarium.model.execution_policy import (
    DEFAULT,
    MISSED_RUN_LATEST,
    MISSED_SKIP,
    ExecutionPolicy,
)
from horarium.store.runs.vocabulary import (
    Decision,
    DueJob,
    ExecutionKind,
    FaultJob,
    Outcome,
    RunExecution,
)

# At most this many Postponed entries are written for one gap: history keeps no more per job.
POSTPONED_CAP = 1000


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def postponed_message(
    ran: datetime | None, unrecorded: int, why: str = ""
) -> Callable[[datetime, int], str]:
    """History message of a missed execution (the `index`-th written, oldest first); `ran`:
    the execution that ran in its place, if one did (else `why` none did)."""
    instead = (
        f"the execution expected at {_iso(ran)} ran in its place."
        if ran is not None
        else f"it was not run ({why})."
    )

    def message(expected: datetime, index: int) -> str:
        text = (
            f"Postponed: the execution expected at {_iso(expected)} was missed (the service "
            f"was not running or was overloaded); {instead}"
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
            policy = info.policy
            if policy is DEFAULT:
                step = advance(
                    series, due.next_execution_at, due.next_repeat, now, grace, POSTPONED_CAP
                )
            else:
                step = advance_by_policy(
                    series,
                    due.next_execution_at,
                    due.next_repeat,
                    now,
                    grace,
                    POSTPONED_CAP,
                    policy,
                )
        except Exception as exc:  # a stored schedule the recurrence engine refuses
            telemetry.schedule_broken(due, exc)
            return FaultJob(due, f"The job's schedule cannot be computed: {exc}")
        decision = self._run(due, step, series.recurring, policy)
        if decision.outcome is Outcome.RUN and not due.in_flight and policy.serial:
            decision.outcome, decision.reason = overlap_outcome(due, policy, decision.expected)
            telemetry.passed_over(decision)
        return decision

    def _run(
        self, due: DueJob, step: Advance, recurring: bool, policy: ExecutionPolicy
    ) -> RunExecution:
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
            postponed_message=postponed_message(
                step.run.expected if step.runs and policy.missed == MISSED_RUN_LATEST else None,
                step.postponed_unrecorded,
                _why_not_run(policy),
            )
            if step.postponed
            else None,
            outcome=Outcome.RUN if step.runs else Outcome.NONE,
        )


def _why_not_run(policy: ExecutionPolicy) -> str:
    if policy.missed == MISSED_SKIP:
        return "the job's executionPolicy.missed is Skip"
    window = format_timespan(policy.catch_up_window)
    return f"it is older than the job's executionPolicy.catchUpWindow, {window}"
