"""pause: when a paused job or collection is enabled again

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_TABLES = ("jobs", "job_collections")


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("paused_until", UTCDateTime(timezone=True), nullable=True)
            )
            batch_op.create_index(batch_op.f(f"ix_{table}_paused_until"), ["paused_until"])


def downgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(batch_op.f(f"ix_{table}_paused_until"))
            batch_op.drop_column("paused_until")
