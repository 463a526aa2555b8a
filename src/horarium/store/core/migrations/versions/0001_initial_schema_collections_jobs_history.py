"""initial schema: collections, jobs, history

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "job_collections",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(length=400), nullable=False),
        sa.Column("subscription_id", sa.String(length=100), nullable=False),
        sa.Column("resource_group", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("location", sa.String(length=100), nullable=True),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("sku", sa.String(length=20), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_collections")),
        sa.UniqueConstraint("key", name=op.f("uq_job_collections_key")),
    )
    with op.batch_alter_table("job_collections", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_job_collections_subscription_id_resource_group"),
            ["subscription_id", "resource_group"],
            unique=False,
        )

    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("definition", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("schedule_set_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("updated_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), server_default="1", nullable=False),
        sa.Column("next_execution_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("next_repeat", sa.Integer(), server_default="1", nullable=False),
        sa.Column("lease_owner", sa.String(length=100), nullable=True),
        sa.Column("lease_expires_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("execution_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("failure_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("faulted_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_execution_at", UTCDateTime(timezone=True), nullable=True),
        sa.Column("ended_at", UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["collection_id"],
            ["job_collections.id"],
            name=op.f("fk_jobs_collection_id_job_collections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_jobs_collection_id_key"), ["collection_id", "key"], unique=True
        )
        batch_op.create_index(
            batch_op.f("ix_jobs_next_execution_at"), ["next_execution_at"], unique=False
        )

    op.create_table(
        "job_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("execution_tag", sa.String(length=64), nullable=True),
        sa.Column("action_name", sa.String(length=20), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("retry_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column("repeat_count", sa.Integer(), server_default="0", nullable=False),
        sa.Column(
            "expected_execution_time",
            UTCDateTime(timezone=True),
            nullable=True,
        ),
        sa.Column("start_time", UTCDateTime(timezone=True), nullable=True),
        sa.Column("end_time", UTCDateTime(timezone=True), nullable=True),
        sa.Column("message", sa.Text(), server_default="", nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_job_history_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_job_history")),
    )
    with op.batch_alter_table("job_history", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_job_history_job_id_id"), ["job_id", "id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_job_history_job_id_status_id"), ["job_id", "status", "id"], unique=False
        )


def downgrade() -> None:

    with op.batch_alter_table("job_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_history_job_id_status_id"))
        batch_op.drop_index(batch_op.f("ix_job_history_job_id_id"))

    op.drop_table("job_history")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_next_execution_at"))
        batch_op.drop_index(batch_op.f("ix_jobs_collection_id_key"))

    op.drop_table("jobs")
    with op.batch_alter_table("job_collections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_job_collections_subscription_id_resource_group"))

    op.drop_table("job_collections")
