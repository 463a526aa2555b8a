"""64-bit ids for the tables that gain a row per execution or event (PostgreSQL; SQLite's
INTEGER rowid is already 64-bit)

`job_history`, `job_executions`, `notifications` and `monitor_check_ins`: their `id` column and
its sequence become `bigint`. Altering a column's type rewrites the table and rebuilds its
indexes, under an ACCESS EXCLUSIVE lock (on `job_history`, the partitioned parent: every
partition, the default one included, in the same statement). PostgreSQL names the partitions'
rebuilt indexes anew (`<partition>_<columns>_idx`): they get their names back
(`<parent index>_<partition suffix>`, as `store.runs.partitions` makes them).
`engine_marks.value` (the trims' marks, an id) is `bigint` since 0004.

Downgrade turns them back to `integer`; it refuses when an id or a sequence is past 2^31 - 1.

Revision ID: 0015
Revises: 0014
"""

from alembic import op
from sqlalchemy import text

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

TABLES = ("job_history", "job_executions", "notifications", "monitor_check_ins")
INT4_MAX = 2**31 - 1
# Each partition's index of each partitioned index of the table: (parent index, partition) and
# the partition's index's name.
PARTITION_INDEXES = text(
    "SELECT parent.relname, partition.relname, child.relname"
    " FROM pg_inherits i"
    " JOIN pg_class parent ON parent.oid = i.inhparent"
    " JOIN pg_class child ON child.oid = i.inhrelid"
    " JOIN pg_index x ON x.indexrelid = child.oid"
    " JOIN pg_class partition ON partition.oid = x.indrelid"
    " JOIN pg_index px ON px.indexrelid = parent.oid"
    " WHERE px.indrelid = CAST(:table AS regclass)"
)


def _partition_indexes(table: str) -> dict[tuple[str, str], str]:
    found = op.get_bind().execute(PARTITION_INDEXES, {"table": table})
    return {(parent, partition): child for parent, partition, child in found}


def _retype(to: str) -> None:
    bind = op.get_bind()
    for table in TABLES:
        sequence = bind.execute(
            text("SELECT pg_get_serial_sequence(:table, 'id')"), {"table": table}
        ).scalar_one()
        named = _partition_indexes(table)
        op.execute(text(f"ALTER TABLE {table} ALTER COLUMN id TYPE {to}"))
        for key, now in _partition_indexes(table).items():
            if named[key] != now:
                op.execute(text(f"ALTER INDEX {now} RENAME TO {named[key]}"))
        op.execute(text(f"ALTER SEQUENCE {sequence} AS {to}"))


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _retype("bigint")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    bind = op.get_bind()
    for table in TABLES:
        sequence = bind.execute(
            text("SELECT pg_get_serial_sequence(:table, 'id')"), {"table": table}
        ).scalar_one()
        newest = bind.execute(
            text(f"SELECT greatest((SELECT max(id) FROM {table}), last_value) FROM {sequence}")
        ).scalar_one()
        if newest > INT4_MAX:
            raise RuntimeError(
                f"cannot downgrade {table}.id to a 32-bit integer: ids have reached {newest},"
                f" past {INT4_MAX}"
            )
    _retype("integer")
