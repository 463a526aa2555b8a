"""Passes over every stored job's secrets: at start (seal what an older version stored in clear,
and count what this process's key cannot open) and for `horarium secrets rotate` (seal again,
under the keyring's first key, what other keys sealed); collections' notification secrets too.

A complete pass that found nothing unreadable marks the keys that sealed the store
(`store.core.seal_marks`); a later start whose keyring holds every marked key skips the pass, so
start-up does not grow with the jobs.

Each page of jobs is read, then written in a transaction of its own, each row conditional on the
version read: a job the API rewrote meanwhile was sealed by that write and is left alone. The
version is not bumped (the definition means the same), so executions in flight are unaffected.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.model.notifications import NOTIFICATIONS
from horarium.store.core.db import write_transaction
from horarium.store.core.schema import job_collections, jobs
from horarium.store.core.seal_marks import mark_keys, marked_keys, unmark_keys
from horarium.store.core.sealing import (
    Keyring,
    SealError,
    holds_clear_secrets,
    open_notification_secret,
    seal_definition,
    seal_notifications,
    sealed_key_id,
    unseal_definition,
)

PAGE = 500
MAX_PASSES = 5  # rotation: passes while rows changed under it


@dataclass
class SealReport:
    sealed: int = 0  # jobs whose secrets were in clear, sealed now
    resealed: int = 0  # jobs whose secrets were sealed again under the first key
    current: int = 0  # jobs whose secrets the first key already sealed
    unreadable: Counter[str] = field(default_factory=Counter)  # key id -> jobs it sealed
    keys: set[str] = field(default_factory=set)  # ids of the keys that sealed the readable jobs
    skipped: bool = False  # the store's marks showed nothing to do: no job was read
    collections: int = 0  # collections whose notification secrets were sealed again
    # key id -> collections with notification secrets it sealed, which no key held opens
    unreadable_collections: Counter[str] = field(default_factory=Counter)

    @property
    def any_unreadable(self) -> bool:
        return bool(self.unreadable or self.unreadable_collections)

    def unreadable_text(self) -> str:
        """E.g. 'the secrets of 3 jobs and the notification secrets of 1 collections (key id
        0123456789ab: 4)': what no key held opens, by the id of the key that sealed it."""
        parts = []
        if self.unreadable:
            parts.append(f"the secrets of {sum(self.unreadable.values())} jobs")
        if self.unreadable_collections:
            count = sum(self.unreadable_collections.values())
            parts.append(f"the notification secrets of {count} collections")
        by_key = self.unreadable + self.unreadable_collections
        ids = ", ".join(f"{kid}: {n}" for kid, n in sorted(by_key.items()))
        return f"{' and '.join(parts)} (key id {ids})"


async def seal_clear_secrets(engine: AsyncEngine, keyring: Keyring) -> SealReport:
    """Seal the secrets stored in clear; count the jobs, and the collections with notification
    secrets, whose key `keyring` does not hold.

    Skipped (`report.skipped`) when the store is marked sealed and `keyring` holds every marked
    key; the keyring's sealing key is marked either way, before this process writes."""
    report = SealReport()
    async with engine.connect() as conn:
        before = await marked_keys(conn)
    if before and all(keyring.holds(kid) for kid in before):
        report.skipped = True
        if keyring.sealing_id not in before:
            async with write_transaction(engine) as conn:
                await mark_keys(conn, [keyring.sealing_id])
        return report
    await _pass(engine, keyring, report, rotate=False)
    await _count_unreadable_collections(engine, keyring, report)
    if not report.any_unreadable:
        # Marked keys this keyring does not hold sealed nothing stored: forget them. Those it
        # holds stay (a process may still seal with them); keys marked meanwhile stay too.
        stale = {kid for kid in before if not keyring.holds(kid)}
        async with write_transaction(engine) as conn:
            await unmark_keys(conn, stale - report.keys)
            await mark_keys(conn, report.keys | {keyring.sealing_id})
    return report


async def _count_unreadable_collections(
    engine: AsyncEngine, keyring: Keyring, report: SealReport
) -> None:
    """Count, by key id, the collections whose notification secrets a key `keyring` does not
    hold sealed (only collections that notify have any: `notify_events` is not 0)."""
    async with engine.connect() as conn:
        documents = (
            await conn.execute(
                select(job_collections.c.document).where(job_collections.c.notify_events != 0)
            )
        ).scalars()
        for document in documents:
            stored = (document or {}).get(NOTIFICATIONS) or []
            for kid in _sealing_ids(stored):
                if keyring.holds(kid):
                    report.keys.add(kid)
                else:
                    report.unreadable_collections[kid] += 1


async def drop_old_copies(engine: AsyncEngine) -> None:
    """After secrets were sealed (from clear, or again under a new key): rewrite the storage,
    so that the old versions of those rows are gone from the files (SQLite: VACUUM, then the WAL
    emptied; PostgreSQL: VACUUM FULL of the jobs table; its own WAL and older backups are the
    operator's to age out)."""
    autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
    async with autocommit.connect() as conn:
        if conn.dialect.name == "sqlite":
            await conn.execute(text("VACUUM"))
            await conn.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        else:
            await conn.execute(text("VACUUM FULL jobs, job_collections"))


async def rotate(engine: AsyncEngine, keyring: Keyring) -> SealReport:
    """Seal every job's secrets under `keyring`'s first key (its other keys open the old)."""
    report = SealReport()
    async with engine.connect() as conn:
        before = await marked_keys(conn)
    for _ in range(MAX_PASSES):
        report.unreadable.clear()
        report.keys.clear()
        report.current = 0
        if not await _pass(engine, keyring, report, rotate=True):
            break
    await _rotate_collections(engine, keyring, report)
    if not report.unreadable and not report.unreadable_collections:
        # The keys that sealed before the rotation no longer have to be held to start.
        async with write_transaction(engine) as conn:
            await unmark_keys(conn, before - report.keys - {keyring.sealing_id})
            await mark_keys(conn, report.keys | {keyring.sealing_id})
    return report


def _sealing_ids(notifications: list[Any]) -> set[str]:
    """The ids of the keys that sealed the secrets of a collection's stored notifications."""
    return {str(n["secret"].get("key")) for n in notifications if isinstance(n.get("secret"), dict)}


async def _rotate_collections(engine: AsyncEngine, keyring: Keyring, report: SealReport) -> None:
    """Seal the collections' notification secrets again under the first key; each write is
    conditional on the document read (a collection the API rewrote meanwhile sealed its
    secrets under the first key already)."""
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                select(job_collections.c.id, job_collections.c.document).order_by(
                    job_collections.c.id
                )
            )
        ).all()
    for row in rows:
        document = dict(row.document or {})
        stored = document.get(NOTIFICATIONS) or []
        kids = _sealing_ids(stored)
        if not kids - {keyring.sealing_id}:
            continue
        try:
            opened = [
                {**n, "secret": open_notification_secret(n, keyring)} if "secret" in n else n
                for n in stored  # an email channel has no secret
            ]
        except SealError:
            for kid in kids:
                if not keyring.holds(kid):
                    report.unreadable_collections[kid] += 1
            continue
        document[NOTIFICATIONS] = seal_notifications(opened, keyring)
        async with write_transaction(engine) as conn:
            current = (
                await conn.execute(
                    select(job_collections.c.document).where(job_collections.c.id == row.id)
                )
            ).scalar()
            if current != row.document:
                continue
            await conn.execute(
                update(job_collections)
                .where(job_collections.c.id == row.id)
                .values(document=document)
            )
        report.collections += 1


async def _pass(engine: AsyncEngine, keyring: Keyring, report: SealReport, *, rotate: bool) -> int:
    """One pass over all jobs; returns how many rows changed under it (to be read again)."""
    missed = 0
    after = 0
    while True:
        async with engine.connect() as conn:
            rows = (
                await conn.execute(
                    select(jobs.c.id, jobs.c.version, jobs.c.definition)
                    .where(jobs.c.id > after)
                    .order_by(jobs.c.id)
                    .limit(PAGE)
                )
            ).all()
        if not rows:
            return missed
        after = rows[-1].id
        changes = [c for c in (_change(row, keyring, report, rotate) for row in rows) if c]
        if changes:
            missed += await _write(engine, changes, report)


_SEALED, _RESEALED = "sealed", "resealed"


def _change(
    row: Any, keyring: Keyring, report: SealReport, rotate: bool
) -> tuple[str, dict[str, Any]] | None:
    """What to write for one row (which count it adds to, the update's parameters); None when
    nothing (what it found is counted in `report`)."""
    stored = row.definition
    kid = sealed_key_id(stored)
    if kid is None:
        if not holds_clear_secrets(stored):
            return None
        kind, definition = _SEALED, seal_definition(stored, keyring)
    elif not keyring.holds(kid):
        report.unreadable[kid] += 1
        return None
    elif not rotate or kid == keyring.sealing_id:
        report.current += 1
        report.keys.add(kid)
        return None
    else:
        try:
            definition = seal_definition(unseal_definition(stored, keyring), keyring)
        except SealError:
            report.unreadable[kid] += 1
            return None
        kind = _RESEALED
    report.keys.add(keyring.sealing_id)
    return kind, {"b_id": row.id, "b_version": row.version, "b_definition": definition}


_UPDATE = (
    update(jobs)
    .where(jobs.c.id == bindparam("b_id"), jobs.c.version == bindparam("b_version"))
    .values(definition=bindparam("b_definition", type_=jobs.c.definition.type))
)


async def _write(
    engine: AsyncEngine, changes: list[tuple[str, dict[str, Any]]], report: SealReport
) -> int:
    """Write the changes and count them; returns how many rows had changed since they were read."""
    missed = 0
    async with write_transaction(engine) as conn:
        for kind, change in changes:
            if (await conn.execute(_UPDATE, change)).rowcount:
                setattr(report, kind, getattr(report, kind) + 1)
            else:
                missed += 1
    return missed
