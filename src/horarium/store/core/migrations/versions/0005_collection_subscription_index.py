"""job_collections: index on lower(subscription_id), lower(resource_group) for the listings

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_job_collections_lower_subscription_id",
        "job_collections",
        [sa.text("lower(subscription_id)"), sa.text("lower(resource_group)")],
        unique=False,
    )


def downgrade() -> None:
    op.drop_index("ix_job_collections_lower_subscription_id", table_name="job_collections")
