"""The work python-dateutil does to expand iCalendar rules, counted in steps and bounded.

dateutil expands a rule period by period (a day, week, month or year, as its `FREQ` says),
examines each day of a period against the rule's filters, and keeps looking for the next
occurrence up to the year 9999: a rule that never matches (`FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31`)
examines 8,000 years of days, and `UNTIL` does not stop it (dateutil compares it only with the
occurrences it finds). So the cost of an expansion cannot be read from the rules; it is counted.

Inside a `limited(steps)` block, each period dateutil moves through costs `PERIOD_STEPS` plus one
step per day it examines, and each occurrence it produces `OCCURRENCE_STEPS`; past `steps` the
expansion stops with `TooCostly`. The weights make a step cost about the same CPU whatever the
rule's `FREQ` (docs/recurrence.md §8). The count hooks dateutil's period and occurrence
generators, once, when this module is imported; outside a block a hook only looks up that no
count is running.

A rule stopped this way is left unusable (its cache's lock held), so a block may expand only
rules made for it: recurring_ical_events makes them per query, and no rule outlives a query
(zones are not read from documents: `ical_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from dateutil import rrule as dateutil_rrule

PERIOD_STEPS = 10  # a period moved through, besides its days
OCCURRENCE_STEPS = 5  # an occurrence produced

DaySet = tuple[list[int | None], int, int]  # dateutil's days of a period: (days, start, end)


class TooCostly(Exception):
    """An expansion went past its steps; `rule` names the rule being expanded then."""

    def __init__(self, steps: int, rule: str) -> None:
        super().__init__(f"more than {steps} steps, in {rule}")
        self.steps = steps
        self.rule = rule


class _Meter:
    """The steps left to one `limited` block."""

    __slots__ = ("left", "steps")

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.left = steps

    def spend(self, steps: int, rule: Any) -> None:
        self.left -= steps
        if self.left < 0:
            raise TooCostly(self.steps, _named(rule))


def _named(rule: Any) -> str:
    """``RRULE:FREQ=DAILY;BYMONTHDAY=40 (DTSTART 2020-01-01T09:00:00+00:00)``."""
    lines = [line for line in str(rule).splitlines() if not line.startswith("DTSTART")]
    return f"{' '.join(lines)} (DTSTART {rule._dtstart.isoformat()})"


_meter: ContextVar[_Meter | None] = ContextVar("ical_work_meter", default=None)


@contextmanager
def limited(steps: int) -> Iterator[_Meter]:
    """Count dateutil's work in the block; `TooCostly` once it passes `steps`."""
    meter = _Meter(steps)
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


def _counting_days(days_of: Callable[..., DaySet]) -> Callable[..., DaySet]:
    def counted(info: Any, year: int, month: int, day: int) -> DaySet:
        found = days_of(info, year, month, day)
        meter = _meter.get()
        if meter is not None:
            meter.spend(PERIOD_STEPS + found[2] - found[1], info.rrule)
        return found

    counted.__wrapped__ = days_of  # type: ignore[attr-defined]
    return counted


def _counting_occurrences(
    occurrences_of: Callable[[Any], Iterator[datetime]],
) -> Callable[[Any], Iterator[datetime]]:
    def counted(rule: Any) -> Iterator[datetime]:
        for occurrence in occurrences_of(rule):
            meter = _meter.get()
            if meter is not None:
                meter.spend(OCCURRENCE_STEPS, rule)
            yield occurrence

    counted.__wrapped__ = occurrences_of  # type: ignore[attr-defined]
    return counted


def _install() -> None:
    """Hook the count into dateutil's `rrule` (its private period and occurrence generators:
    the only places all of a rule's work passes through); once per process."""
    info = dateutil_rrule._iterinfo
    if hasattr(info.ydayset, "__wrapped__"):
        return
    for name in ("ydayset", "mdayset", "wdayset", "ddayset"):
        setattr(info, name, _counting_days(getattr(info, name)))
    rule = dateutil_rrule.rrule
    rule._iter = _counting_occurrences(rule._iter)  # type: ignore[attr-defined]


_install()
