"""engine: pending executions table; retention indexes on jobs.ended_at and history.end_time

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_executions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("execution_tag", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("repeat_count", sa.Integer(), nullable=False),
        sa.Column("expected_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("job_version", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=10), nullable=False),
        sa.Column("attempt", sa.Integer(), server_default="0", nullable=False),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_executions_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_executions")),
    )
    with op.batch_alter_table("job_executions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_job_executions_due_at"), ["due_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_job_executions_job_id"), ["job_id"], unique=False)

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_ended_at"), ["ended_at"], unique=False)

    with op.batch_alter_table("job_history", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_job_history_end_time"), ["end_time"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("job_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_history_end_time"))

    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_ended_at"))

    with op.batch_alter_table("job_executions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_executions_job_id"))
        batch_op.drop_index(batch_op.f("ix_job_executions_due_at"))

    op.drop_table("job_executions")
