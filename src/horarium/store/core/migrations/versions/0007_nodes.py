"""nodes: the engine processes of a cluster and their heartbeats

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "nodes",
        sa.Column("id", sa.String(length=100), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started", UTCDateTime(timezone=True), nullable=False),
        sa.Column("last_beat", UTCDateTime(timezone=True), nullable=False),
        sa.Column("version", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_nodes")),
    )
    op.create_index(op.f("ix_nodes_last_beat"), "nodes", ["last_beat"])


def downgrade() -> None:
    op.drop_index(op.f("ix_nodes_last_beat"), table_name="nodes")
    op.drop_table("nodes")
