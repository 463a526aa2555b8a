"""Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API.

`horarium.preview(properties, *, now, count=10, calendars=None)` lists a job's next executions
(see `horarium.recurrence`); `calendars`: the exclusion calendars it may list, by name.
`horarium.__version__`: the installed version.
"""

from importlib.metadata import PackageNotFoundError, version

from horarium.recurrence import RecurrenceError, preview

try:
    __version__ = version("horarium")  # single source: `version` in pyproject.toml
except PackageNotFoundError:  # run from source without being installed
    __version__ = "unknown"

__all__ = ["RecurrenceError", "__version__", "preview"]
