"""Passes over every stored job's secrets: at start (seal what an older version stored in clear,
and count what this process's key cannot open) and for `horarium secrets rotate` (seal again,
under the keyring's first key, what other keys sealed).

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

from horarium.store.db import write_transaction
from horarium.store.schema import jobs
from horarium.store.sealing import (
    Keyring,
    SealError,
    holds_clear_secrets,
    seal_definition,
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

    def unreadable_text(self) -> str:
        """E.g. '3 jobs (key id 0123456789ab: 3)'."""
        ids = ", ".join(f"{kid}: {n}" for kid, n in sorted(self.unreadable.items()))
        return f"{sum(self.unreadable.values())} jobs (key id {ids})"


async def seal_clear_secrets(engine: AsyncEngine, keyring: Keyring) -> SealReport:
    """Seal the secrets stored in clear; count the jobs whose key `keyring` does not hold."""
    report = SealReport()
    await _pass(engine, keyring, report, rotate=False)
    return report


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
            await conn.execute(text("VACUUM FULL jobs"))


async def rotate(engine: AsyncEngine, keyring: Keyring) -> SealReport:
    """Seal every job's secrets under `keyring`'s first key (its other keys open the old)."""
    report = SealReport()
    for _ in range(MAX_PASSES):
        report.unreadable.clear()
        report.current = 0
        if not await _pass(engine, keyring, report, rotate=True):
            break
    return report


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
        return None
    else:
        try:
            definition = seal_definition(unseal_definition(stored, keyring), keyring)
        except SealError:
            report.unreadable[kid] += 1
            return None
        kind = _RESEALED
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
