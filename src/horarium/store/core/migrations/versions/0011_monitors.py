"""monitors: check-in monitors, their check-ins, the check-in trim's mark

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "monitors",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("schedule_set_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("expected_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("started_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("last_check_in_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["job_collections.id"],
            name=op.f("fk_monitors_collection_id_job_collections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_monitors")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_monitors_token_sha256")),
    )
    op.create_index(
        op.f("ix_monitors_collection_id_key"), "monitors", ["collection_id", "key"], unique=True
    )
    op.create_index(op.f("ix_monitors_due_at"), "monitors", ["due_at"])
    op.create_table(
        "monitor_check_ins",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("monitor_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("received_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("body", sa.Text(), nullable=False, server_default=""),
        sa.ForeignKeyConstraint(
            ["monitor_id"],
            ["monitors.id"],
            name=op.f("fk_monitor_check_ins_monitor_id_monitors"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_monitor_check_ins")),
    )
    op.create_index(
        op.f("ix_monitor_check_ins_monitor_id_id"), "monitor_check_ins", ["monitor_id", "id"]
    )
    op.create_index(op.f("ix_monitor_check_ins_received_at"), "monitor_check_ins", ["received_at"])
    op.execute("INSERT INTO engine_marks (name, value) VALUES ('check_in_trim', 0)")


def downgrade() -> None:
    op.execute("DELETE FROM engine_marks WHERE name = 'check_in_trim'")
    op.drop_index(op.f("ix_monitor_check_ins_received_at"), table_name="monitor_check_ins")
    op.drop_index(op.f("ix_monitor_check_ins_monitor_id_id"), table_name="monitor_check_ins")
    op.drop_table("monitor_check_ins")
    op.drop_index(op.f("ix_monitors_due_at"), table_name="monitors")
    op.drop_index(op.f("ix_monitors_collection_id_key"), table_name="monitors")
    op.drop_table("monitors")
