"""`horarium` command line: serve, worker, preview, keys, secrets; and over the REST API,
collections, jobs, calendars, export, import (`horarium.cli.rest`).

Every option of `serve` / `worker` also reads HORARIUM_<OPTION> (dashes become underscores).
"""

from __future__ import annotations

from typing import Any

import click

from horarium import logs
from horarium.cli.keys import keys
from horarium.cli.options import OneLineError, settings_from, settings_options
from horarium.cli.rest import MANAGEMENT_COMMANDS
from horarium.cli.secrets import secrets


@click.group()
@click.version_option(package_name="horarium")
def main() -> None:
    """Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API."""


@main.command()
@settings_options()
def serve(**values: Any) -> None:
    """Run the management API (and, by default, the scheduler)."""
    from horarium.api.exposure import ExposureError, review
    from horarium.api.probes import probe_warnings
    from horarium.server import serve as run

    settings = settings_from(**values)
    logs.setup(settings.log_format, settings.log_level)
    try:
        warnings = review(settings)
    except ExposureError as e:
        raise OneLineError(str(e)) from None
    for warning in warnings + probe_warnings(settings):
        logs.warn(warning)
    run(settings)


@main.command()
@settings_options(api=False)
def worker(**values: Any) -> None:
    """Run only the scheduler against the database (for scaled deployments)."""
    from horarium.api.probes import probe_warnings
    from horarium.worker import run

    settings = settings_from(run_engine=True, **values)
    logs.setup(settings.log_format, settings.log_level)
    for warning in probe_warnings(settings):
        logs.warn(warning)
    run(settings)


@main.command()
@click.argument("file", type=click.File("r"))
@click.option("--now", default=None, help="Creation instant (ISO 8601); default: now.")
@click.option("--count", default=10, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--calendar",
    "calendars",
    multiple=True,
    metavar="NAME=FILE",
    help="An exclusion calendar the job may list (JSON: the resource or its properties).",
)
@click.option(
    "--down-since",
    default=None,
    metavar="ISO",
    help="The job was set then and the service was down until --now: list the executions"
    " missed meanwhile, marked with what executionPolicy.missed does with them.",
)
def preview(
    file: Any, now: str | None, count: int, calendars: tuple[str, ...], down_since: str | None
) -> None:
    """Print the next executions of a job (JSON file, or - for stdin)."""
    from horarium.cli.preview import run

    raise SystemExit(
        run(file.read(), now=now, count=count, calendars=calendars, down_since=down_since)
    )


main.add_command(keys)
main.add_command(secrets)
for command in MANAGEMENT_COMMANDS:
    main.add_command(command)
