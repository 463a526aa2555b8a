"""calendars: a collection's exclusion calendars

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calendars",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("properties", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["job_collections.id"],
            name=op.f("fk_calendars_collection_id_job_collections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calendars")),
    )
    with op.batch_alter_table("calendars", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_calendars_collection_id_key"), ["collection_id", "key"], unique=True
        )


def downgrade() -> None:
    op.drop_table("calendars")
