"""job_deadlines: the marks of jobs' executionPolicy.deadlines

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "job_deadlines",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("started_for", UTCDateTime(timezone=True), nullable=True),
        sa.Column("started_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("late_for", UTCDateTime(timezone=True), nullable=True),
        sa.Column("overran_for", UTCDateTime(timezone=True), nullable=True),
        sa.Column("due_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["jobs.id"],
            name=op.f("fk_job_deadlines_job_id_jobs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("job_id", name=op.f("pk_job_deadlines")),
    )
    op.create_index(op.f("ix_job_deadlines_due_at"), "job_deadlines", ["due_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_job_deadlines_due_at"), table_name="job_deadlines")
    op.drop_table("job_deadlines")
