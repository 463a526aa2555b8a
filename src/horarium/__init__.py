"""Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API.

`horarium.preview(properties, *, now, count=10, calendars=None)` lists a job's next executions
(see `horarium.recurrence`); `calendars`: the exclusion calendars it may list, by name.
"""

from horarium.recurrence import RecurrenceError, preview

__all__ = ["RecurrenceError", "preview"]
