"""Management commands over the REST API: `collections`, `jobs`.

They talk to a running service (`--url`, `--token`), never to its database."""

from horarium.commands.collections import collections
from horarium.commands.jobs import jobs

MANAGEMENT_COMMANDS = (collections, jobs)

__all__ = ["MANAGEMENT_COMMANDS", "collections", "jobs"]
