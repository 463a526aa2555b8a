"""`horarium keys`: create, list and revoke the API keys callers authenticate with.

Keys live in the database (every process serving it sees them at once), as SHA-256 digests:
`create` prints the token once, and nothing can show it again."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import click
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.cli.database import run_on
from horarium.cli.options import OneLineError, settings_from, settings_options
from horarium.config import Settings

T = TypeVar("T")

_database_options = settings_options(only=("data_dir", "database"))


def _in_transaction(settings: Settings, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    """`work` in one write transaction on the migrated database."""
    from horarium.store.core.db import create_engine, migrate, write_transaction

    async def run() -> T:
        engine = create_engine(settings.database_url, timeout=settings.database_timeout)
        try:
            await migrate(engine)
            async with write_transaction(engine) as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return run_on(settings.database_url, run)


@click.group()
def keys() -> None:
    """Manage API keys (stored as hashes in the database)."""


@keys.command()
@click.option(
    "--subscription",
    required=True,
    help="The subscription id the key reaches, or '*' for every subscription.",
)
@click.option(
    "--role",
    type=click.Choice(["reader", "contributor"]),
    default="contributor",
    show_default=True,
    help="reader: GET, list and preview only; contributor: also write, delete and run.",
)
@click.option("--name", default=None, help="A unique name (default: generated).")
@click.option(
    "--expires-in",
    type=click.IntRange(min=1),
    default=None,
    metavar="DAYS",
    help="Days until the key expires (default: never).",
)
@_database_options
def create(
    subscription: str, role: str, name: str | None, expires_in: int | None, **values: Any
) -> None:
    """Make a key and print its token (only the token, on stdout; it is not shown again); its
    name, which `revoke` takes, goes to stderr."""
    from horarium.api.api_keys import ApiKeyError, IssuedKey, issue
    from horarium.api.principal import Role

    async def make(conn: AsyncConnection) -> IssuedKey:
        return await issue(
            conn,
            subscription=subscription,
            role=Role(role),
            name=name,
            now=datetime.now(UTC),
            expires_in=timedelta(days=expires_in) if expires_in is not None else None,
        )

    try:
        issued = _in_transaction(settings_from(**values), make)
    except ApiKeyError as e:
        raise OneLineError(str(e)) from None
    click.echo(
        f"Made the key {issued.record.name!r} ({role} of {subscription}); revoke it with"
        f" `horarium keys revoke {issued.record.name}`.",
        err=True,
    )
    click.echo(issued.token)


@keys.command(name="list")
@_database_options
def list_keys(**values: Any) -> None:
    """Show every key: name, subscription, role, created, expires (never the token)."""
    from horarium.store.resources.api_keys import list_all

    found = _in_transaction(settings_from(**values), list_all)
    rows = [("NAME", "SUBSCRIPTION", "ROLE", "CREATED", "EXPIRES")]
    rows += [
        (k.name, k.subscription, k.role, _when(k.created_at), _when(k.expires_at)) for k in found
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


@keys.command()
@click.argument("name")
@_database_options
def revoke(name: str, **values: Any) -> None:
    """Delete the key NAME: its token is refused from the next request on."""
    from horarium.store.resources.api_keys import delete_one

    if not _in_transaction(settings_from(**values), lambda conn: delete_one(conn, name)):
        raise click.ClickException(f"no API key named {name!r} (see 'horarium keys list')")
    click.echo(f"Revoked the API key {name!r}.", err=True)


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else "never"
