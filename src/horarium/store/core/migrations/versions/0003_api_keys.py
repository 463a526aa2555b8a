"""api_keys: the API keys callers authenticate with, kept as SHA-256 digests

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

from horarium.store.core.types import UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("subscription", sa.String(length=100), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("name", name=op.f("uq_api_keys_name")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_api_keys_token_sha256")),
    )


def downgrade() -> None:
    op.drop_table("api_keys")
