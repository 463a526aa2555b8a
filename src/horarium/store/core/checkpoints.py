"""SQLite's WAL checkpoints, off the write path.

In WAL mode SQLite copies the log back into the database file (a checkpoint, with an fsync of
the file) when a commit finds the log past `wal_autocheckpoint` pages, inside that commit: the
writer holding the process's write lock (`db.write_transaction`) then takes tens of
milliseconds, and every check-in, claim and API write queued behind it waits as long. So the
process that owns the file (`horarium serve`) checkpoints from a connection of its own on a
thread every `INTERVAL` seconds, `PASSIVE` (it copies what no reader still needs, never waits
for or blocks a writer), and the commits' own checkpoint is kept only as a backstop
(`db.WAL_BACKSTOP_PAGES`, far past what a second of writes makes) should this task stop: its
engine is made with `create_engine(..., background_checkpoints=True)`.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.db import sync_sqlite_engine

log = logging.getLogger(__name__)

INTERVAL = 1.0  # seconds between checkpoints


def checkpoint(engine: Engine) -> tuple[int, int, int]:
    """One passive checkpoint (blocking: run it on a thread); SQLite's (busy, log pages,
    pages copied)."""
    with engine.connect() as conn:
        row = conn.execute(text("PRAGMA wal_checkpoint(PASSIVE)")).one()
        return int(row[0]), int(row[1]), int(row[2])


async def checkpoint_forever(db: AsyncEngine, interval: float = INTERVAL) -> None:
    """Checkpoint `db`'s file every `interval` seconds for the life of the task (SQLite only:
    returns at once for another database)."""
    if db.dialect.name != "sqlite":
        return
    engine = sync_sqlite_engine(db)
    try:
        while True:
            await asyncio.sleep(interval)
            try:
                await asyncio.to_thread(checkpoint, engine)
            except Exception as exc:  # the next round tries again; the backstop bounds the log
                log.warning("WAL checkpoint failed: %s", exc)
    finally:
        engine.dispose()
