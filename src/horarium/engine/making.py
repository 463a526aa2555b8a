"""Turning due jobs into executions: which execution runs, what comes next, what was missed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from horarium.engine import telemetry
from horarium.engine.plans import Plans
from horarium.engine.schedule import Advance, advance
from horarium.store.runs import LAST, ONCE, SCHEDULED, Broken, Claimed, DueJob, Made, Runs

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


class Maker:
    def __init__(self, runs: Runs, plans: Plans, grace: timedelta, touched_jobs: set[int]) -> None:
        self._runs = runs
        self._plans = plans
        self._grace = grace
        self._touched = touched_jobs  # jobs given Postponed history (for cleanup)

    async def make(
        self, now: datetime, limit: int, lease: timedelta, horizon: datetime | None = None
    ) -> list[Claimed]:
        """Claim up to `limit` jobs due by `horizon` (default: now), held by this process."""
        return await self._runs.claim_jobs(now, limit, lease, self.decider(now), horizon)

    def decider(self, now: datetime) -> Callable[[DueJob], Made | Broken]:
        return lambda due: self.decide(due, now)

    def decide(self, due: DueJob, now: datetime) -> Made | Broken:
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
            return Broken(due, f"The job's schedule cannot be computed: {exc}")
        return self._made(due, step, recurring=series.recurring)

    def _made(self, due: DueJob, step: Advance, recurring: bool) -> Made:
        kind = ONCE if not recurring else (LAST if step.last else SCHEDULED)
        if step.postponed:
            # `decide` runs inside the claim transaction, on SQLite on the writer thread:
            # set.add is atomic, as are the cleanup's copy-and-remove of this set.
            self._touched.add(due.info.id)
            telemetry.postponed(due.info, step)
        return Made(
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
