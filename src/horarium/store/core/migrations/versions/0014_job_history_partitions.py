"""job_history partitioned by day of end_time (PostgreSQL; SQLite keeps one table)

The table as it was becomes a partition, not a copy: `job_history_before_YYYYMMDD`, every entry
that ended before the day after the newest one (its indexes and foreign key are adopted as the
parent's; one read of the table checks its bound, nothing is written per row). Entries without
`end_time` move to the default partition. The engine makes the daily partitions
(`horarium.store.runs.partitions`); until then entries go to the default partition. An empty
table is dropped instead of attached. The id sequence is kept (the history trim's mark is an id).

Downgrade copies every entry back into one plain table.

Revision ID: 0014
Revises: 0013
"""

from alembic import op
from sqlalchemy import text

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

PARENT = "job_history"
DEFAULT = "job_history_default"
SEQUENCE = "job_history_id_seq"
# The indexes of job_history besides its primary key (columns by name). In partitions the
# end_time index is a BRIN: rows arrive in end_time order, so it summarizes page ranges instead
# of taking an entry per row (what reads by end_time need: the engine page's recent counts, the
# row-by-row ageing of the default partition and the attached table).
INDEXES = {
    "ix_job_history_end_time": "end_time",
    "ix_job_history_job_id_id": "job_id, id",
    "ix_job_history_job_id_status_id": "job_id, status, id",
}
METHODS = {"ix_job_history_end_time": "brin"}  # in partitions; btree otherwise


def _using(name: str) -> str:
    return f"USING {METHODS[name]} " if name in METHODS else ""


FOREIGN_KEY = (
    "FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE"  # fk_job_history_job_id_jobs
)


def _execute(sql: str) -> None:
    op.execute(text(sql))


def _keys_and_indexes(table: str, suffix: str) -> None:
    _execute(f"ALTER TABLE {table} ADD CONSTRAINT pk_{table} PRIMARY KEY (id)")
    for name, columns in INDEXES.items():
        _execute(f"CREATE INDEX {name}_{suffix} ON {table} {_using(name)}({columns})")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    bind = op.get_bind()
    newest = bind.execute(
        text(
            "SELECT to_char(date_trunc('day', max(end_time) AT TIME ZONE 'UTC')"
            " + interval '1 day', 'YYYYMMDD') FROM job_history"
        )
    ).scalar()
    any_rows = bind.execute(text("SELECT EXISTS (SELECT 1 FROM job_history)")).scalar()
    today = bind.execute(
        text("SELECT to_char((now() AT TIME ZONE 'UTC') + interval '1 day', 'YYYYMMDD')")
    ).scalar()
    bound = max(str(newest or today), str(today))  # the old table's rows end before that day
    old = f"{PARENT}_before_{bound}"
    suffix = f"before_{bound}"

    _execute(f"ALTER SEQUENCE {SEQUENCE} OWNED BY NONE")
    _execute(f"ALTER TABLE {PARENT} RENAME TO {old}")
    _execute(f"ALTER TABLE {old} RENAME CONSTRAINT pk_{PARENT} TO pk_{old}")
    _execute(f"ALTER TABLE {old} RENAME CONSTRAINT fk_{PARENT}_job_id_jobs TO fk_{old}_job_id_jobs")
    for name in INDEXES:
        _execute(f"ALTER INDEX {name} RENAME TO {name}_{suffix}")

    _execute(f"CREATE TABLE {PARENT} (LIKE {old} INCLUDING DEFAULTS) PARTITION BY RANGE (end_time)")
    _execute(f"ALTER SEQUENCE {SEQUENCE} OWNED BY {PARENT}.id")
    for name, columns in INDEXES.items():
        _execute(f"CREATE INDEX {name} ON {PARENT} {_using(name)}({columns})")
    _execute(f"ALTER TABLE {PARENT} ADD CONSTRAINT fk_{PARENT}_job_id_jobs {FOREIGN_KEY}")

    _execute(f"CREATE TABLE {DEFAULT} (LIKE {PARENT} INCLUDING DEFAULTS)")
    _keys_and_indexes(DEFAULT, "default")
    _execute(f"ALTER TABLE {PARENT} ATTACH PARTITION {DEFAULT} DEFAULT")

    if not any_rows:
        _execute(f"DROP TABLE {old}")
        return
    _execute(
        f"WITH moved AS (DELETE FROM {old} WHERE end_time IS NULL RETURNING *)"
        f" INSERT INTO {DEFAULT} SELECT * FROM moved"
    )
    # A checked constraint that implies the bound spares the attachment its own read.
    upper = f"'{bound[:4]}-{bound[4:6]}-{bound[6:]} 00:00:00+00'"
    _execute(
        f"ALTER TABLE {old} ADD CONSTRAINT {old}_bound"
        f" CHECK (end_time IS NOT NULL AND end_time < {upper})"
    )
    _execute(f"ALTER TABLE {PARENT} ATTACH PARTITION {old} FOR VALUES FROM (MINVALUE) TO ({upper})")
    _execute(f"ALTER TABLE {old} DROP CONSTRAINT {old}_bound")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    plain = f"{PARENT}_plain"
    _execute(f"CREATE TABLE {plain} (LIKE {PARENT} INCLUDING DEFAULTS)")
    _execute(f"INSERT INTO {plain} SELECT * FROM {PARENT} ORDER BY id")
    _execute(f"ALTER SEQUENCE {SEQUENCE} OWNED BY NONE")
    _execute(f"DROP TABLE {PARENT}")
    _execute(f"ALTER TABLE {plain} RENAME TO {PARENT}")
    _execute(f"ALTER SEQUENCE {SEQUENCE} OWNED BY {PARENT}.id")
    _execute(f"ALTER TABLE {PARENT} ADD CONSTRAINT pk_{PARENT} PRIMARY KEY (id)")
    for name, columns in INDEXES.items():
        _execute(f"CREATE INDEX {name} ON {PARENT} ({columns})")
    _execute(f"ALTER TABLE {PARENT} ADD CONSTRAINT fk_{PARENT}_job_id_jobs {FOREIGN_KEY}")
