"""`horarium serve` and `horarium worker`: the options, the settings' review and the start-up
warnings; the processes themselves: `horarium.process.serve`, `horarium.process.worker`."""

from __future__ import annotations

from typing import Any

import click

from horarium import logs
from horarium.cli.options import OneLineError, settings_from, settings_options
from horarium.config import Settings, outdated_options


@click.command()
@settings_options()
def serve(**values: Any) -> None:
    """Run the management API (and, by default, the scheduler)."""
    from horarium.api.exposure import ExposureError, review
    from horarium.api.probes import probe_warnings
    from horarium.process.serve import serve as run

    settings = settings_from(**values)
    logs.setup(settings.log_format, settings.log_level)
    try:
        warnings = review(settings) + _smtp_warnings(settings)
    except ExposureError as e:
        raise OneLineError(str(e)) from None
    for warning in warnings + probe_warnings(settings) + outdated_options(settings):
        logs.warn(warning)
    run(settings)


@click.command()
@settings_options(api=False)
def worker(**values: Any) -> None:
    """Run only the scheduler against the database (for scaled deployments)."""
    from horarium.api.probes import probe_warnings
    from horarium.process.worker import run

    settings = settings_from(run_engine=True, **values)
    logs.setup(settings.log_format, settings.log_level)
    warnings = _smtp_warnings(settings)
    for warning in warnings + probe_warnings(settings) + outdated_options(settings):
        logs.warn(warning)
    run(settings)


def _smtp_warnings(settings: Settings) -> list[str]:
    """--smtp-url checked at start (a malformed one is refused, in one line without its
    password) and what weakens it."""
    from horarium.actions.mail import smtp_warnings

    try:
        return smtp_warnings(settings.smtp_url)
    except ValueError as e:
        raise OneLineError(str(e)) from None
