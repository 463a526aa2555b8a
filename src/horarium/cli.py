"""`horarium` command line: serve, worker, preview.

Every option of `serve` / `worker` also reads HORARIUM_<OPTION> (dashes become underscores).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from horarium.config import Settings
from horarium.loops import LOOPS

_DEFAULTS = Settings()


def _service_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by `serve` and `worker`; each also reads HORARIUM_<NAME>."""
    options = [
        click.option(
            "--host",
            default=_DEFAULTS.host,
            show_default=True,
            envvar="HORARIUM_HOST",
            help="Address the API listens on.",
        ),
        click.option(
            "--port",
            default=_DEFAULTS.port,
            show_default=True,
            type=int,
            envvar="HORARIUM_PORT",
            help="Port the API listens on.",
        ),
        click.option(
            "--data-dir",
            default=str(_DEFAULTS.data_dir),
            show_default=True,
            envvar="HORARIUM_DATA_DIR",
            type=click.Path(path_type=Path),
            help="Folder of the embedded SQLite database.",
        ),
        click.option(
            "--database",
            default=None,
            envvar="HORARIUM_DATABASE",
            help="Database URL (sqlite:///FILE or postgresql://…); "
            "default: SQLite file in --data-dir.",
        ),
        click.option(
            "--http-timeout",
            default=_DEFAULTS.http_timeout,
            show_default=True,
            type=float,
            envvar="HORARIUM_HTTP_TIMEOUT",
            help="Seconds an HTTP action may take.",
        ),
        click.option(
            "--grace-period",
            default=_DEFAULTS.grace_period,
            show_default=True,
            type=float,
            envvar="HORARIUM_GRACE_PERIOD",
            help="Seconds late before an execution counts as missed.",
        ),
        click.option(
            "--poll-interval",
            default=_DEFAULTS.poll_interval,
            show_default=True,
            type=float,
            envvar="HORARIUM_POLL_INTERVAL",
            help="Longest sleep between looks for due work.",
        ),
        click.option(
            "--batch-size",
            default=_DEFAULTS.batch_size,
            show_default=True,
            type=int,
            envvar="HORARIUM_BATCH_SIZE",
            help="Executions claimed per round.",
        ),
        click.option(
            "--lease-seconds",
            default=_DEFAULTS.lease_seconds,
            show_default=True,
            type=float,
            envvar="HORARIUM_LEASE_SECONDS",
            help="How long a claim is held before another process may take it over.",
        ),
        click.option(
            "--max-in-flight",
            default=_DEFAULTS.max_in_flight,
            show_default=True,
            type=int,
            envvar="HORARIUM_MAX_IN_FLIGHT",
            help="Executions running at once in this process.",
        ),
        click.option(
            "--loop",
            default=_DEFAULTS.loop,
            show_default=True,
            type=click.Choice(LOOPS),
            envvar="HORARIUM_LOOP",
            help="Event loop: auto takes uvloop when it is installed, else asyncio's own.",
        ),
        click.option(
            "--region",
            default=_DEFAULTS.region,
            show_default=True,
            envvar="HORARIUM_REGION",
            help="Value of the x-ms-scheduler-execution-region header.",
        ),
        click.option(
            "--aad-authority",
            default=_DEFAULTS.aad_authority,
            show_default=True,
            envvar="HORARIUM_AAD_AUTHORITY",
            help="Azure AD authority for ActiveDirectoryOAuth actions.",
        ),
        click.option(
            "--storage-queue-url",
            default=_DEFAULTS.storage_queue_url,
            show_default=True,
            envvar="HORARIUM_STORAGE_QUEUE_URL",
            help="Queue service URL template ({account}).",
        ),
        click.option(
            "--servicebus-url",
            default=_DEFAULTS.servicebus_url,
            show_default=True,
            envvar="HORARIUM_SERVICEBUS_URL",
            help="AMQP connection URL template ({namespace}).",
        ),
        click.option(
            "--servicebus-queue-address",
            default=_DEFAULTS.servicebus_queue_address,
            show_default=True,
            envvar="HORARIUM_SERVICEBUS_QUEUE_ADDRESS",
            help="AMQP target address template for queues ({queue}).",
        ),
        click.option(
            "--servicebus-topic-address",
            default=_DEFAULTS.servicebus_topic_address,
            show_default=True,
            envvar="HORARIUM_SERVICEBUS_TOPIC_ADDRESS",
            help="AMQP target address template for topics ({topic}).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _settings(run_engine: bool, **values: Any) -> Settings:
    return Settings(run_engine=run_engine, **values)


@click.group()
@click.version_option(package_name="horarium")
def main() -> None:
    """Horarium: a self-hosted job scheduler that speaks the Azure Scheduler REST API."""


@main.command()
@_service_options
@click.option(
    "--engine/--no-engine",
    "run_engine",
    default=True,
    show_default=True,
    envvar="HORARIUM_ENGINE",
    help="Also run the scheduler in this process.",
)
def serve(run_engine: bool, **values: Any) -> None:
    """Run the management API (and, by default, the scheduler)."""
    from horarium.server import serve as run

    run(_settings(run_engine, **values))


@main.command()
@_service_options
def worker(**values: Any) -> None:
    """Run only the scheduler against the database (for scaled deployments)."""
    from horarium.engine.service import run_worker

    run_worker(_settings(True, **values))


@main.command()
@click.argument("file", type=click.File("r"))
@click.option("--now", default=None, help="Creation instant (ISO 8601); default: now.")
@click.option("--count", default=10, show_default=True, type=click.IntRange(min=1))
def preview(file: Any, now: str | None, count: int) -> None:
    """Print the next executions of a job (JSON file, or - for stdin)."""
    from horarium.preview_cli import run

    raise SystemExit(run(file.read(), now=now, count=count))


if __name__ == "__main__":
    main()
