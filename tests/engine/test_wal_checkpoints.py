"""SQLite's WAL checkpoints run off the write path (`store.core.checkpoints`): commits leave the
log to the background task (their own checkpoint only a far backstop), and the task copies it
back into the database file without waiting for writers."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import text

from horarium.store.core.checkpoints import checkpoint, checkpoint_forever
from horarium.store.core.db import (
    WAL_AUTOCHECKPOINT_PAGES,
    WAL_BACKSTOP_PAGES,
    create_engine,
    sync_sqlite_engine,
)


async def _write_pages(db, rows: int) -> None:  # type: ignore[no-untyped-def]
    async with db.begin() as conn:
        await conn.execute(text("CREATE TABLE IF NOT EXISTS t (v TEXT)"))
        for _ in range(rows):
            await conn.execute(text("INSERT INTO t VALUES (:v)"), {"v": "x" * 2000})


async def test_commits_leave_the_log_to_the_background_checkpoint(tmp_path: Path) -> None:
    db = create_engine(f"sqlite:///{tmp_path}/store.sqlite3", background_checkpoints=True)
    sync = sync_sqlite_engine(db)
    plain = create_engine(f"sqlite:///{tmp_path}/other.sqlite3")  # no task: SQLite's own
    try:
        for engine, pages in ((db, WAL_BACKSTOP_PAGES), (plain, WAL_AUTOCHECKPOINT_PAGES)):
            async with engine.connect() as conn:
                found = (await conn.execute(text("PRAGMA wal_autocheckpoint"))).scalar()
            assert found == pages
        await _write_pages(db, 3000)  # past SQLite's default of 1,000 pages: still in the log
        busy, log_pages, copied = await asyncio.to_thread(checkpoint, sync)
        assert busy == 0 and log_pages > 1000 and copied == log_pages

        # Written pages reach the database file only through a checkpoint: with the task
        # running, the file grows soon after the writes.
        file = tmp_path / "store.sqlite3"
        before = file.stat().st_size
        task = asyncio.create_task(checkpoint_forever(db, interval=0.05))
        await _write_pages(db, 600)
        for _ in range(200):
            await asyncio.sleep(0.05)
            if file.stat().st_size > before:
                break
        task.cancel()
        assert file.stat().st_size > before
    finally:
        sync.dispose()
        await db.dispose()
        await plain.dispose()
