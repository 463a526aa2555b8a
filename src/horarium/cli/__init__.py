"""`horarium` command line: serve, worker (`serving`), preview, keys, secrets, backup, restore
(`backups`), migrate (`migrating`); and over the REST API, collections, jobs, calendars, monitors,
export, import (`horarium.cli.rest`).

Every option of `serve` / `worker` also reads HORARIUM_<OPTION> (dashes become underscores).
"""

from __future__ import annotations

import click

from horarium.cli import backups, keys, migrating, preview, rest, secrets, serving


@click.group()
@click.version_option(package_name="horarium")
def main() -> None:
    """Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API."""


main.add_command(serving.serve)
main.add_command(serving.worker)
main.add_command(preview.preview_command)
main.add_command(keys.keys)
main.add_command(secrets.secrets)
main.add_command(backups.backup)
main.add_command(backups.restore)
main.add_command(migrating.migrate)
for command in rest.MANAGEMENT_COMMANDS:
    main.add_command(command)
