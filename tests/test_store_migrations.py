"""The schema is created by the migrations, on SQLite and PostgreSQL, and re-running is a no-op."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine as sa_create_engine
from sqlalchemy import inspect

from horarium.store.core.db import alembic_config, create_engine, migrate
from horarium.store.core.revisions import REVISION, head_revision, known_revisions
from tests.support import fresh_pg_database


async def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        await migrate(engine)
        await migrate(engine)  # idempotent
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_sqlite_file_gets_schema_in_wal_mode(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sub' / 'h.sqlite3'}"
    tables = await _tables(url)
    assert {"job_collections", "jobs", "job_history", "api_keys", "alembic_version"} <= tables
    engine = create_engine(url)
    async with engine.connect() as conn:
        mode = (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar()
    await engine.dispose()
    assert mode == "wal"


@pytest.mark.postgres
def test_postgres_gets_schema() -> None:
    import asyncio

    with fresh_pg_database() as url:
        tables = asyncio.run(_tables(url))
    assert {"job_collections", "jobs", "job_history", "api_keys", "alembic_version"} <= tables


def test_the_revisions_read_from_file_names_are_alembics() -> None:
    """`store.core.revisions` reads the migrations from their file names; Alembic's own reading
    of the scripts must agree: the same revisions, one chain, the same head."""
    scripts = ScriptDirectory.from_config(alembic_config())
    chain = [script.revision for script in reversed(list(scripts.walk_revisions()))]
    assert list(known_revisions()) == chain
    assert head_revision() == scripts.get_current_head()


def test_a_database_at_the_head_is_opened_without_loading_alembic(tmp_path: Path) -> None:
    """A process whose database is up to date skips the migration tool (a quicker start); a
    database one migration behind is still brought to the head."""
    url = f"sqlite:///{tmp_path / 'h.sqlite3'}"
    opening = (
        "import asyncio, sys\n"
        "from horarium.store.core.db import create_engine, migrate\n"
        "async def main():\n"
        f"    engine = create_engine({url!r})\n"
        "    await migrate(engine)\n"
        "    await engine.dispose()\n"
        "asyncio.run(main())\n"
        "print('alembic' in sys.modules)\n"
    )

    def loaded_alembic() -> bool:
        run = subprocess.run([sys.executable, "-c", opening], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip() == "True"

    assert loaded_alembic()  # an empty file: migrated
    assert not loaded_alembic()  # at the head: nothing to do
    before = known_revisions()[-2]
    engine = sa_create_engine(url)
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), before)
    assert loaded_alembic()  # one behind: migrated again
    with engine.connect() as connection:
        assert connection.execute(REVISION).scalar() == head_revision()
    engine.dispose()


_JOBS_FORM = """
SELECT (SELECT reloptions FROM pg_class WHERE relname = 'jobs'),
       array_agg(indexdef ORDER BY indexname)
FROM pg_indexes WHERE tablename = 'jobs'
"""


@pytest.mark.postgres
async def test_a_postgres_database_of_0012_gets_room_for_hot_updates_and_partial_indexes() -> None:
    """Migration 0013 on a database holding jobs: `jobs` keeps room on its pages for the new
    versions of its rows, and its indexes on mostly-NULL columns become partial; its rows stay.
    Downgraded, the table and indexes are as 0012 made them."""
    from sqlalchemy import text

    with fresh_pg_database() as url:
        engine = create_engine(url)
        try:
            async with engine.begin() as conn:
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0012"))
                await conn.execute(
                    text(
                        "INSERT INTO job_collections (key, subscription_id, resource_group, name,"
                        " state, sku, document, created_at, updated_at) VALUES ('s/g/c', 's',"
                        " 'g', 'c', 'Enabled', 'Standard', '{}', now(), now())"
                    )
                )
                await conn.execute(
                    text(
                        "INSERT INTO jobs (collection_id, key, name, definition, state,"
                        " schedule_set_at, created_at, updated_at, next_execution_at)"
                        " SELECT id, 'j', 'j', '{}', 'Enabled', now(), now(), now(), now()"
                        " FROM job_collections"
                    )
                )
                before = (await conn.execute(text(_JOBS_FORM))).one()
            await migrate(engine)
            async with engine.begin() as conn:
                options, indexes = (await conn.execute(text(_JOBS_FORM))).one()
                assert (await conn.execute(text("SELECT count(*) FROM jobs"))).scalar() == 1
                await conn.run_sync(lambda c: command.downgrade(alembic_config(c), "0012"))
                after_downgrade = (await conn.execute(text(_JOBS_FORM))).one()
        finally:
            await engine.dispose()
    assert before[0] is None
    assert options == ["fillfactor=50"]
    partial = {i.split(" ON ")[0].split()[-1]: i for i in indexes if " WHERE " in i}
    assert sorted(partial) == [
        "ix_jobs_ended_at",
        "ix_jobs_next_execution_at",
        "ix_jobs_paused_until",
    ]
    assert "WHERE (next_execution_at IS NOT NULL)" in partial["ix_jobs_next_execution_at"]
    assert tuple(after_downgrade) == tuple(before)
