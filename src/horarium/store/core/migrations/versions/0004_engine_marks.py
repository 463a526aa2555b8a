"""engine_marks: how far a periodic engine task has looked (the history trim's last entry)

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    marks = op.create_table(
        "engine_marks",
        sa.Column("name", sa.String(length=50), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_engine_marks")),
    )
    # The history trim's mark (store/runs/retention.py); trimming starts from the first entry.
    op.bulk_insert(marks, [{"name": "history_trim", "value": 0}])


def downgrade() -> None:
    op.drop_table("engine_marks")
