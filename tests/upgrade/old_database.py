"""A database as an earlier Horarium left it: the fixtures `tests/upgrade/make_fixture.py` made
by running commit `COMMIT` (newest migration 0006), loaded into a new SQLite file or an empty
PostgreSQL database, with that run's secret key; and what the old API answered then."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from functools import cache
from pathlib import Path
from typing import Any

COMMIT = "6fea51a"
REVISION = "0006"
FIXTURES = Path(__file__).with_name("fixtures")


@cache
def expected() -> dict[str, Any]:
    """What the old version was given and answered (`make_fixture.py` says what is in it)."""
    found: dict[str, Any] = json.loads((FIXTURES / f"{COMMIT}.expected.json").read_text())
    return found


def write_secret_key(path: Path) -> None:
    """The old run's secret key, as the key file at `path` (mode 0600)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text((FIXTURES / f"{COMMIT}.secret.key").read_text())
    path.chmod(0o600)


def load_sqlite(path: Path) -> None:
    """A new SQLite file at `path` holding the old run's database (its dump, replayed)."""
    dump = _text(f"{COMMIT}.sqlite.sql")
    with closing(sqlite3.connect(path)) as db:
        db.executescript(dump)
    path.chmod(0o600)


def load_postgres(url: str) -> None:
    """The old run's PostgreSQL dump (plain SQL, `pg_dump --inserts`) replayed into the empty
    database at `url`. Its psql meta-commands (`\\restrict`, `\\unrestrict`: psql's guard against
    a dump that runs commands) are not SQL and are left out."""
    import asyncpg

    dump = _text(f"{COMMIT}.postgres.sql")
    script = "\n".join(line for line in dump.split("\n") if not line.startswith("\\"))

    async def run() -> None:
        conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            await conn.execute(script)
        finally:
            await conn.close()

    asyncio.run(run())


def _text(name: str) -> str:
    """A dump as it was written: its values hold carriage returns (HTTP headers in history
    messages), which reading in text mode would turn into newlines."""
    with open(FIXTURES / name, encoding="utf-8", newline="") as dump:
        return dump.read()


def execution_tag(database_url: str, job: str) -> str:
    """The execution tag of the job's execution waiting for a retry (`job_executions`)."""
    from sqlalchemy import select

    from horarium.store.core.db import create_engine
    from horarium.store.core.schema import job_executions, jobs

    async def read() -> str:
        db = create_engine(database_url)
        try:
            async with db.connect() as conn:
                query = select(job_executions.c.execution_tag).join(jobs).where(jobs.c.name == job)
                return str((await conn.execute(query)).scalar_one())
        finally:
            await db.dispose()

    return asyncio.run(read())
