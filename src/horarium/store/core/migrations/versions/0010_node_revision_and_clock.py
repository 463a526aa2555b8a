"""nodes: each node's schema revision and its clock's offset from the database's

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("schema_revision", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("clock_offset", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        batch_op.drop_column("clock_offset")
        batch_op.drop_column("schema_revision")
