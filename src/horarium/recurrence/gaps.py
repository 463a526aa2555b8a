"""The shortest gap a recurrence allows between two runs, on the wall clock (daylight saving
time ignored): what `recurrence.jitter` may not exceed (docs/recurrence.md §10).

Exact for `cron` (`cron.shortest_gap`) and for Second / Minute / Hour; for Day and longer a
lower bound from the times of day and the closest two run days the schedule can give.
"""

from __future__ import annotations

from itertools import pairwise

from horarium.recurrence import cron
from horarium.recurrence.parse import Rule
from horarium.recurrence.timeline import DAY, HOUR, MINUTE, SECOND


def shortest_gap(rule: Rule) -> int | None:
    """The gap in µs; None for a one-time job."""
    if rule.cron is not None:
        return cron.shortest_gap(rule.cron)
    frequency, n, schedule = rule.frequency, rule.interval, rule.schedule
    if frequency is None:
        return None
    if frequency == "Second":
        return n * SECOND
    if frequency == "Minute":
        return n * MINUTE
    if frequency == "Hour":
        if schedule is None or not schedule.minutes:
            return n * HOUR
        marks = [m * MINUTE for m in schedule.minutes]
        return min([b - a for a, b in pairwise(marks)] + [n * HOUR - marks[-1] + marks[0]])
    minutes = (schedule.minutes if schedule else None) or (0,)
    hours = (schedule.hours if schedule else None) or (
        range(24) if schedule and schedule.minutes else (0,)
    )
    times = sorted({h * HOUR + m * MINUTE for h in hours for m in minutes})
    gaps = [b - a for a, b in pairwise(times)]
    gaps.append(_closest_days(rule) * DAY - (times[-1] - times[0]))
    return min(gaps)


def _closest_days(rule: Rule) -> int:
    """The fewest days between two run days (a lower bound)."""
    n, schedule = rule.interval, rule.schedule
    if rule.frequency == "Day":
        return n
    if rule.frequency == "Week":
        days = sorted(schedule.week_days) if schedule and schedule.week_days else [0]
        return min([b - a for a, b in pairwise(days)] + [7 * n - days[-1] + days[0]])
    if rule.frequency == "Month":
        listed = len(schedule.month_days or ()) + len(schedule.occurrences or ()) if schedule else 0
        if listed > 1:
            return 1  # two listed days may be neighbours, or the last and the first
        if schedule and any(k is None for _, k in schedule.occurrences or ()):
            return 7  # every Friday
        return 28 * n  # the shortest month
    return 365 * n  # Year
