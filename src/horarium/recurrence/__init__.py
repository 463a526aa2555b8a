"""When a job runs: the rules of docs/recurrence.md, pure, no I/O.

Public surface (other packages import only these names):

- `RecurrenceError(ValueError)`: invalid `startTime` / `recurrence`; the message names the field
  and the rule, e.g. ``recurrence.schedule.minutes[2]: 61 is not in 0..59``.
- `plan(properties, *, created) -> Plan`: validate a job's properties (the Azure job JSON's
  ``"properties"``: ``startTime``, ``recurrence``; other keys ignored) and compile them.
- `Plan`: the compiled series.
    - ``first`` — the first execution (aware UTC), or None when the series is empty
      (e.g. an endTime already past).
    - ``at_or_after(instant)`` — the first execution of the series at or after ``instant``
      (never before ``first``), honouring endTime but not count; None when the series has
      ended. Computed directly: the cost does not depend on how far back the anchor lies.
    - ``after(instant)`` — the same, strictly after.
    - ``iter_from(instant)`` — executions at or after ``instant``, in order (endTime honoured,
      count not).
    - ``count`` — recurrence.count or None; ``end`` — endTime as aware UTC or None.
    - ``zone`` — the job's ZoneInfo; ``recurring`` — False for one-time jobs.
    - ``describe(instant) -> Occurrence`` — the wall-clock time in the zone and DST marks.
- `preview(properties, *, now, count=10, calendars=None) -> list[datetime]`: the next `count`
  executions of a job created at `now` (count of the recurrence honoured); `calendars`: the
  exclusion calendars it may list, by name, as the calendar resource's `properties`.
- Exclusion calendars (`recurrence.excludeCalendars`, `recurrence.onExcluded`): `plan` reads
  their properties from the definition's internal `resolvedCalendars` (`RESOLVED`);
  `read_calendar` validates a calendar's properties; `excluded_days(properties, zone, first,
  last)` lists the days one excludes in a window, and why; `outline(plan, start, count)` lists runs
  and skipped executions with the calendar that moved or skipped them.
- `describe(properties, *, created=None, calendars=None) -> str`: the timing in plain English
  (``weekdays at 09:15 Europe/Paris; 10 times``), validated as `plan` does, nothing computed.
- `cron_shortest_gap(expression) -> timedelta`: the shortest wall-clock gap between two runs
  of a `recurrence.cron` expression (for plan quotas).
- `read_duration(text) -> timedelta`: a TimeSpan or ISO 8601 duration, as Horarium reads them
  everywhere (ValueError otherwise).
- `parse_instant(value, zone=None) -> datetime`: an ISO 8601 value read as `startTime` /
  `endTime` are (offset or Z: that instant; none: wall-clock time in `zone`; date only:
  midnight in `zone`), as aware UTC.

Decisions where the design doc is silent: docs/recurrence.md.
"""

from horarium.recurrence.api import Occurrence, Plan, RecurrenceError, parse_instant
from horarium.recurrence.calendar_days import excluded_days
from horarium.recurrence.calendars import read_calendar
from horarium.recurrence.cron import cron_shortest_gap
from horarium.recurrence.describe import describe
from horarium.recurrence.durations import read_duration
from horarium.recurrence.excluding import (
    MODES,
    RESOLVED,
    Run,
    exclusion_names,
    outline,
    plan,
    preview,
    with_calendars,
)

__all__ = [
    "MODES",
    "RESOLVED",
    "Occurrence",
    "Plan",
    "RecurrenceError",
    "Run",
    "cron_shortest_gap",
    "describe",
    "excluded_days",
    "exclusion_names",
    "outline",
    "parse_instant",
    "plan",
    "preview",
    "read_calendar",
    "read_duration",
    "with_calendars",
]
