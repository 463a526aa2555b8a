"""Alembic environment: always run with a connection handed in by horarium.store.core.db.migrate."""

from __future__ import annotations

from alembic import context

from horarium.store.core.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
