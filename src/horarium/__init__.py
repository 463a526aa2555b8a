"""Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API.

`horarium.preview(properties, *, now, count=10, calendars=None)` lists a job's next executions
(see `horarium.recurrence`); `calendars`: the exclusion calendars it may list, by name.
`horarium.__version__`: the installed version.
"""

from functools import cache

from horarium.recurrence import RecurrenceError, preview

__all__ = ["RecurrenceError", "__version__", "preview"]


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed package's metadata when first asked for (reading
    it costs every process start tens of milliseconds otherwise)."""
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'horarium' has no attribute {name!r}")


@cache
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("horarium")  # single source: `version` in pyproject.toml
    except PackageNotFoundError:  # run from source without being installed
        return "unknown"
