"""jobs: room for HOT updates, and partial indexes on the columns NULL for many rows

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

# PostgreSQL only (SQLite keeps its form): `jobs` pages keep room for the new versions of their
# rows, so that a lease update (no indexed column) is HOT; and the indexes on columns that are
# NULL for many rows receive no entry for a row whose value is NULL. A fillfactor applies to
# pages written from now on: `VACUUM FULL jobs` applies it to the whole table at once
# (docs/operations.md).
FILLFACTOR = 50
_PARTIAL = ("next_execution_at", "ended_at", "paused_until")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"ALTER TABLE jobs SET (fillfactor = {FILLFACTOR})")
    for column in _PARTIAL:
        _index(column, partial=True)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE jobs RESET (fillfactor)")
    for column in _PARTIAL:
        _index(column, partial=False)


def _index(column: str, *, partial: bool) -> None:
    name = f"ix_jobs_{column}"
    op.drop_index(name, table_name="jobs")
    where = sa.text(f"{column} IS NOT NULL") if partial else None
    op.create_index(name, "jobs", [column], postgresql_where=where)
