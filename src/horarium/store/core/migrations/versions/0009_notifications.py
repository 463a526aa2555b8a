"""notifications: a collection's notified events, the outbox, a job's open fault

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("job_collections", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("notify_events", sa.Integer(), nullable=False, server_default="0")
        )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("faulted_since", UTCDateTime(timezone=True), nullable=True))
    op.create_table(
        "notifications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("event", sa.String(length=30), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("finished", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
    )
    op.create_index(op.f("ix_notifications_due_at"), "notifications", ["due_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_notifications_due_at"), table_name="notifications")
    op.drop_table("notifications")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_column("faulted_since")
    with op.batch_alter_table("job_collections", schema=None) as batch_op:
        batch_op.drop_column("notify_events")
