"""Management commands over the REST API: `collections`, `jobs`, `calendars`, `export`,
`import`.

They talk to a running service (`--url`, `--token`), never to its database."""

from horarium.cli.rest.calendars import calendars
from horarium.cli.rest.collections import collections
from horarium.cli.rest.exporting import export
from horarium.cli.rest.importing import import_
from horarium.cli.rest.jobs import jobs

MANAGEMENT_COMMANDS = (collections, jobs, calendars, export, import_)

__all__ = ["MANAGEMENT_COMMANDS", "calendars", "collections", "export", "import_", "jobs"]
