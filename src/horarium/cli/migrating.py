"""`horarium migrate`: bring the database to this version's schema and exit, so that a cluster is
migrated once, before its processes are replaced (docs/operations.md, "Upgrading")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from sqlalchemy.engine import make_url

from horarium.cli.database import run_on
from horarium.cli.options import settings_from, settings_options


@click.command()
@settings_options(api=False, only=("data_dir", "database"))
def migrate(**values: Any) -> None:
    """Migrate the database to this version's schema and exit.

    Prints one line: from which migration to which. Run it once for a cluster, before its
    processes are replaced by this version's."""
    from horarium.process.opening import fail
    from horarium.store.core.open_errors import check_url

    settings = settings_from(**values)
    url = settings.database_url
    problem = check_url(url)
    if problem is not None:
        fail(problem)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = Path(str(parsed.database))
        if not path.is_file():
            fail(f"there is no SQLite database at {path}: nothing to migrate")
    shown = parsed.render_as_string(hide_password=True)
    before, after = run_on(url, lambda: _migrate(url))
    if before == after:
        click.echo(f"The database {shown} is at migration {after} already: nothing to do.")
    else:
        click.echo(
            f"Migrated the database {shown} from migration {before or 'none (empty)'} to {after}."
        )


async def _migrate(url: str) -> tuple[str | None, str | None]:
    from sqlalchemy import inspect

    from horarium.store.core.db import create_engine, migrate
    from horarium.store.core.probes import schema_revision

    db = create_engine(url)
    try:
        async with db.connect() as conn:
            versioned = await conn.run_sync(lambda c: inspect(c).has_table("alembic_version"))
            before = await schema_revision(conn) if versioned else None
        await migrate(db)
        async with db.connect() as conn:
            after = await schema_revision(conn)
        return before, after
    finally:
        await db.dispose()
