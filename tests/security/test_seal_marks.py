"""The start's pass over the stored secrets runs until it has once found the store whole and
readable; after that a start reads no job (its cost no longer grows with the store) unless its
key cannot open what a marked key sealed, which it still refuses (docs/security.md, "Secrets at
rest"). Against a real SQLite file and a real PostgreSQL database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import delete, update
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core import resealing
from horarium.store.core.schema import engine_marks, jobs
from horarium.store.core.seal_marks import PREFIX, marked_keys
from horarium.store.core.sealing import Keyring, sealed_key_id
from tests.database_fixtures import db_url as db_url
from tests.database_fixtures import migrated
from tests.engine.engine_support import Store

OLD_VERSION_PASSWORD = "stored-in-clear-by-an-older-version"


@pytest.fixture
def key() -> Keyring:
    return Keyring.generate()


@pytest.fixture
async def db(db_url: str, key: Keyring) -> AsyncIterator[AsyncEngine]:
    async with migrated(db_url, key) as engine:
        yield engine


def _with_password(password: str) -> dict[str, Any]:
    auth = {"type": "Basic", "username": "u", "password": password}
    request = {"uri": "http://127.0.0.1:9/", "method": "GET", "authentication": auth}
    return {"action": {"type": "Http", "request": request}}


async def _marks(db: AsyncEngine) -> set[str]:
    async with db.connect() as conn:
        return await marked_keys(conn)


async def _in_clear(db: AsyncEngine, job_id: int) -> None:
    """The job's definition as a version before sealing stored it; that version's store had
    no marks (it predates them)."""
    async with db.begin() as conn:
        await conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(definition=_with_password(OLD_VERSION_PASSWORD))
        )
        await conn.execute(delete(engine_marks).where(engine_marks.c.name.startswith(PREFIX)))


async def test_an_upgraded_store_is_sealed_once_then_starts_read_no_job(
    db: AsyncEngine, key: Keyring
) -> None:
    store = Store(db)
    await store.add("sealed", _with_password("p1"))
    old = await store.add("old", _with_password("p2"))
    await _in_clear(db, old)

    first = await resealing.seal_clear_secrets(db, key)
    assert (first.skipped, first.sealed, first.current) == (False, 1, 1)
    assert await _marks(db) == {key.sealing_id}
    async with db.connect() as conn:
        stored = (await conn.execute(jobs.select().where(jobs.c.id == old))).one().definition
    assert sealed_key_id(stored) == key.sealing_id

    again = await resealing.seal_clear_secrets(db, key)
    assert again.skipped and (again.sealed, again.current, again.unreadable) == (0, 0, {})


async def test_a_key_that_cannot_open_a_marked_key_still_reads_the_store_and_is_refused(
    db: AsyncEngine, db_url: str, key: Keyring
) -> None:
    await Store(db).add("sealed", _with_password("p"))
    await resealing.seal_clear_secrets(db, key)
    other = Keyring.generate()
    refused = await resealing.seal_clear_secrets(db, other)
    assert not refused.skipped and refused.unreadable == {key.sealing_id: 1}
    assert await _marks(db) == {key.sealing_id}
    # A keyring holding the marked key and a new one first: no job read, its key marked.
    both = Keyring([other.keys[0], key.keys[0]])
    started = await resealing.seal_clear_secrets(db, both)
    assert started.skipped and not started.unreadable
    assert await _marks(db) == {key.sealing_id, other.sealing_id}
    # Now a start with the first key alone must read the store again (the other key may have
    # sealed jobs): it finds none sealed by it, forgets it, and the next start reads nothing.
    alone = await resealing.seal_clear_secrets(db, key)
    assert not alone.skipped and (alone.current, alone.unreadable) == (1, {})
    assert await _marks(db) == {key.sealing_id}
    assert (await resealing.seal_clear_secrets(db, key)).skipped


async def test_after_a_rotation_only_the_new_key_is_needed_to_start_without_reading(
    db: AsyncEngine, key: Keyring
) -> None:
    await Store(db).add("sealed", _with_password("p"))
    await resealing.seal_clear_secrets(db, key)
    new = Keyring.generate()
    rotated = await resealing.rotate(db, Keyring([new.keys[0], key.keys[0]]))
    assert rotated.resealed == 1
    assert await _marks(db) == {new.sealing_id}
    assert (await resealing.seal_clear_secrets(db, new)).skipped
    refused = await resealing.seal_clear_secrets(db, key)
    assert refused.unreadable == {new.sealing_id: 1}
