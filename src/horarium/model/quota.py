"""Plans (SKUs) and collection quotas: how many jobs, how often, which features.

A collection's own `quota` may only tighten its plan. The shortest gap a job's recurrence allows
between two runs is estimated from its frequency, interval and schedule lists (a lower bound that
ignores daylight saving time), and compared with the collection's `maxRecurrence`.

Azure's plans keep Azure's limits: at most every minute (Free: every hour). Horarium's own
`Seconds` plan admits recurrences as often as every second (`frequency: "Second"`, six-field
NCRONTAB `cron`): a plan rather than a server option, so that it is chosen per collection, the
jobs Azure's plans refused stay refused with the same 409, and clients that know only Azure's
plans never meet it (docs/api.md, "Quotas and limits").
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from horarium.model.errors import Conflict
from horarium.recurrence import cron_shortest_gap

DAY = 86_400
SECONDS = {
    "Second": 1,
    "Minute": 60,
    "Hour": 3600,
    "Day": DAY,
    "Week": 7 * DAY,
    "Month": 28 * DAY,  # the shortest month: a lower bound
    "Year": 365 * DAY,
}
SECONDS_PLAN = "Seconds"  # Horarium's plan for recurrences finer than a minute


@dataclass(frozen=True)
class Plan:
    """What a SKU allows."""

    max_jobs: int
    min_gap_seconds: int
    outbound_auth: bool
    max_monitors: int  # check-in monitors (Horarium): as many as jobs


PLANS = {
    "Free": Plan(max_jobs=5, min_gap_seconds=3600, outbound_auth=False, max_monitors=5),
    "Standard": Plan(max_jobs=50, min_gap_seconds=60, outbound_auth=True, max_monitors=50),
    "P10Premium": Plan(max_jobs=50, min_gap_seconds=60, outbound_auth=True, max_monitors=50),
    "P20Premium": Plan(max_jobs=1000, min_gap_seconds=60, outbound_auth=True, max_monitors=1000),
    SECONDS_PLAN: Plan(max_jobs=1000, min_gap_seconds=1, outbound_auth=True, max_monitors=1000),
}


@dataclass(frozen=True)
class Limits:
    """The binding limits of one collection: its plan, tightened by its quota."""

    sku: str
    max_jobs: int
    min_gap_seconds: int
    gap_text: str  # "1 hour", for messages
    jobs_from: str  # where max_jobs comes from, for messages
    gap_from: str
    outbound_auth: bool


def _gap_text(seconds: int) -> str:
    for unit, size in (("week", 7 * DAY), ("day", DAY), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"{n} {unit}" + ("s" if n != 1 else "")
    return f"{seconds} second" + ("s" if seconds != 1 else "")


def limits(sku: str, quota: dict[str, Any] | None) -> Limits:
    """The collection's limits; a 409 when its quota is looser than its plan allows."""
    plan = PLANS[sku]
    max_jobs, jobs_from = plan.max_jobs, f"the {sku} plan"
    gap, gap_from = plan.min_gap_seconds, f"the {sku} plan"
    quota = quota or {}
    if "maxJobCount" in quota:
        if quota["maxJobCount"] > plan.max_jobs:
            raise Conflict(
                f"properties.quota.maxJobCount: {quota['maxJobCount']} is more than the"
                f" {plan.max_jobs} jobs the {sku} plan allows",
                code="QuotaExceeded",
            )
        max_jobs, jobs_from = quota["maxJobCount"], "the collection's quota.maxJobCount"
    if "maxRecurrence" in quota:
        recurrence = quota["maxRecurrence"]
        wanted = recurrence.get("interval", 1) * SECONDS[recurrence.get("frequency", "Minute")]
        if wanted < plan.min_gap_seconds:
            raise Conflict(
                f"properties.quota.maxRecurrence: every {_gap_text(wanted)} is more frequent"
                f" than the {sku} plan allows (at most every {_gap_text(plan.min_gap_seconds)})",
                code="QuotaExceeded",
            )
        gap, gap_from = wanted, "the collection's quota.maxRecurrence"
    return Limits(
        sku=sku,
        max_jobs=max_jobs,
        min_gap_seconds=gap,
        gap_text=_gap_text(gap),
        jobs_from=jobs_from,
        gap_from=gap_from,
        outbound_auth=plan.outbound_auth,
    )


def check_job_count(limit: Limits, count: int, collection: str) -> None:
    """`count` is the number of jobs the collection would hold."""
    if count > limit.max_jobs:
        raise Conflict(
            f"Job collection '{collection}' is limited to {limit.max_jobs} jobs by"
            f" {limit.jobs_from}; it already has {count - 1}.",
            code="JobCountQuotaExceeded",
        )


def check_monitor_count(sku: str, count: int, collection: str) -> None:
    """`count` is the number of check-in monitors the collection would hold."""
    most = PLANS[sku].max_monitors
    if count > most:
        raise Conflict(
            f"Job collection '{collection}' is limited to {most} monitors by the {sku} plan;"
            f" it already has {count - 1}.",
            code="MonitorCountQuotaExceeded",
        )


def check_recurrence(
    limit: Limits, definition: dict[str, Any], collection: str, what: str = "job"
) -> None:
    """A 409 when the job (or monitor: `what`) may run more often than the collection
    allows."""
    recurrence = definition.get("recurrence")
    if not recurrence:
        return
    gap = shortest_gap_seconds(recurrence)
    if gap < limit.min_gap_seconds:
        finer = limit.min_gap_seconds == 60 and gap < 60
        hint = f"; the {SECONDS_PLAN} plan allows every second" if finer else ""
        raise Conflict(
            f"properties.recurrence: the {what} can run every {_gap_text(max(gap, 1))}, more often"
            f" than job collection '{collection}' allows (at most every {limit.gap_text},"
            f" set by {limit.gap_from}{hint}).",
            code="RecurrenceQuotaExceeded",
        )


def check_features(limit: Limits, uses_authentication: bool) -> None:
    if uses_authentication and not limit.outbound_auth:
        raise Conflict(
            "properties.action.request.authentication: the Free plan does not allow outbound"
            " authentication; use a Standard or Premium job collection.",
            code="FeatureNotAllowed",
        )


def _smallest_step(values: list[int]) -> int | None:
    ordered = sorted(set(values))
    steps = [b - a for a, b in itertools.pairwise(ordered)]
    return min(steps) if steps else None


def _ints(value: Any) -> list[int]:
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


def shortest_gap_seconds(recurrence: dict[str, Any]) -> int:
    """A lower bound of the time between two runs of a (validated, canonical) recurrence."""
    if isinstance(recurrence.get("cron"), str):
        return max(1, cron_shortest_gap(recurrence["cron"]) // timedelta(seconds=1))
    frequency = recurrence.get("frequency", "Minute")
    interval = recurrence.get("interval", 1)
    if not isinstance(interval, int):
        interval = 1
    if frequency == "Second":
        return max(1, interval)
    return 60 * _schedule_gap_minutes(recurrence, frequency, interval)


def _schedule_gap_minutes(recurrence: dict[str, Any], frequency: str, interval: int) -> int:
    gaps = [interval * SECONDS.get(frequency, 60) // 60]
    schedule = recurrence.get("schedule") or {}
    minutes, hours = _ints(schedule.get("minutes")), _ints(schedule.get("hours"))
    step = _smallest_step(minutes)
    if step is not None:
        gaps.append(step)
    if minutes and not hours and frequency != "Hour":
        gaps.append(60)  # the minutes are run every hour
    minute_span = (max(minutes) - min(minutes)) if minutes else 0
    step = _smallest_step(hours)
    if step is not None:
        gaps.append(60 * step - minute_span)
    times = [60 * h + m for h in (hours or [0]) for m in (minutes or [0])]
    day_span = max(times) - min(times)
    week_days = [d for d in schedule.get("weekDays") or [] if isinstance(d, str)]
    if len(set(week_days)) > 1:
        order = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        numbers = [order.index(d) for d in week_days if d in order]
        day_step = _smallest_step(numbers) or 1
        if interval == 1 and numbers:
            day_step = min(day_step, 7 - max(numbers) + min(numbers))
        gaps.append(1440 * day_step - day_span)
    month_days = _ints(schedule.get("monthDays"))
    occurrences = schedule.get("monthlyOccurrences") or []
    if len(month_days) + len(occurrences) > 1:
        gaps.append(1440 - day_span)  # two listed days may be neighbours
    if any(isinstance(o, dict) and o.get("Occurrence") is None for o in occurrences):
        gaps.append(7 * 1440 - day_span)  # "every Friday"
    return max(1, min(gaps))
