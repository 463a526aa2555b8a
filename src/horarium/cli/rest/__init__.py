"""Management commands over the REST API: `collections`, `jobs`, `calendars`, `monitors`,
`export`, `import`.

They talk to a running service (`--url`, `--token`), never to its database."""

from horarium.cli.rest.calendars import calendars
from horarium.cli.rest.collections import collections
from horarium.cli.rest.exporting import export
from horarium.cli.rest.importing import import_
from horarium.cli.rest.jobs import jobs
from horarium.cli.rest.monitors import monitors

MANAGEMENT_COMMANDS = (collections, jobs, calendars, monitors, export, import_)

__all__ = [
    "MANAGEMENT_COMMANDS",
    "calendars",
    "collections",
    "export",
    "import_",
    "jobs",
    "monitors",
]
