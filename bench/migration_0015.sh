#!/bin/bash
# Migration 0015 (64-bit ids) on a job_history of ROWS rows (default 10 M), PostgreSQL: the rows
# are written at migration 0012 with generate_series, 0014 attaches them as a partition, then
# `horarium migrate` (0014 -> 0015) is timed with the WAL it writes; the downgrade and the
# upgrade again are timed too, and the table's and indexes' sizes printed in each form.
# Run from the repository's root: bench/migration_0015.sh (docs/benchmarks.md, "Migration 0015").
set -euo pipefail
DB=${DB:-horarium_bench_0015}
ROWS=${ROWS:-10000000}
SERVER=${SERVER:-postgresql://postgres@127.0.0.1:5432}
URL=$SERVER/$DB
PY=${PY:-.venv/bin/python}
HORARIUM=${HORARIUM:-.venv/bin/horarium}

sql() { psql "$URL" -Atqc "$1"; }
alembic_to() {  # way revision
    $PY -c "
import asyncio
from alembic import command
from horarium.store.core.db import alembic_config, create_engine
async def main():
    db = create_engine('$URL')
    async with db.begin() as conn:
        await conn.run_sync(lambda c: command.$1(alembic_config(c), '$2'))
    await db.dispose()
asyncio.run(main())
"
}
sizes() {
    psql "$URL" -Atq -F ' ' -c "SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid)),
        round(pg_relation_size(c.oid) / $ROWS.0, 1) || ' B/row' FROM pg_partition_tree('job_history') t
        JOIN pg_index i ON true JOIN pg_class c ON c.oid IN (t.relid, i.indexrelid)
        WHERE t.isleaf AND i.indrelid = t.relid AND t.relid::text LIKE 'job_history_before%'
        GROUP BY c.relname, c.oid ORDER BY 1"
}
timed() {  # what, command...
    local lsn start
    lsn=$(sql "SELECT pg_current_wal_lsn()")
    start=$(date +%s.%N)
    "${@:2}" >/dev/null
    echo "$1: $(echo "$(date +%s.%N) - $start" | bc | cut -c1-5) s," \
        "WAL $(sql "SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), '$lsn'))");" \
        "load $(cut -d' ' -f1-3 /proc/loadavg)"
}

psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
alembic_to upgrade 0012
psql "$URL" -q <<SQL
INSERT INTO job_collections (key, subscription_id, resource_group, name, state, sku, document,
    created_at, updated_at)
  VALUES ('s/rg/c', 's', 'rg', 'c', 'Enabled', 'Standard', '{}', now(), now());
INSERT INTO jobs (collection_id, key, name, definition, state, schedule_set_at, created_at,
    updated_at)
  SELECT 1, 'j' || g, 'j' || g, '{}', 'Enabled', now(), now(), now()
  FROM generate_series(1, 1000) g;
INSERT INTO job_history (job_id, execution_tag, action_name, status, retry_count, repeat_count,
    expected_execution_time, start_time, end_time, message)
  SELECT 1 + g % 1000, md5(g::text), 'MainAction', 'Completed', 0, g / 1000,
    now() - g * interval '518 ms', now() - g * interval '518 ms',
    now() - g * interval '518 ms' + interval '40 ms',
    'Http Action - Response from host ''127.0.0.1'': ''OK'' Status code: ''OK'''
  FROM generate_series(1, $ROWS) g;
SQL
alembic_to upgrade 0014
psql "$URL" -q -c "VACUUM ANALYZE job_history" -c "CHECKPOINT"
echo "job_history: $(sql "SELECT count(*) FROM job_history") rows at 0014 (integer ids)"
sizes
timed "horarium migrate (0014 -> 0015)" $HORARIUM migrate --database "$URL"
sizes
timed "downgrade (0015 -> 0014)" alembic_to downgrade 0014
sizes
timed "horarium migrate again" $HORARIUM migrate --database "$URL"
echo "job_history: $(sql "SELECT count(*) FROM job_history") rows at $(sql "SELECT version_num FROM alembic_version")"
psql "$SERVER/postgres" -qc "DROP DATABASE $DB"
