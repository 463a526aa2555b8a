"""Management commands over the REST API: `collections`, `jobs`, `calendars`, `export`,
`import`.

They talk to a running service (`--url`, `--token`), never to its database."""

from horarium.commands.calendars import calendars
from horarium.commands.collections import collections
from horarium.commands.exporting import export
from horarium.commands.importing import import_
from horarium.commands.jobs import jobs

MANAGEMENT_COMMANDS = (collections, jobs, calendars, export, import_)

__all__ = ["MANAGEMENT_COMMANDS", "calendars", "collections", "export", "import_", "jobs"]
