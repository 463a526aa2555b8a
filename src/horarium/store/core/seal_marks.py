"""Which keys may have sealed a store's secrets: one `engine_marks` row per key id, named
`sealing key <id>` (its value unused).

The rows exist once a complete pass at start (`store.core.resealing`) has found no secret in clear
and none it could not open; from then on every write seals (only a version before sealing stored
secrets in clear, and such a version cannot open a schema that has `engine_marks`). Every process
marks its sealing key before it serves, so the rows name every key that may have sealed a stored
job: a start whose keyring holds all of them skips the pass, whose cost grows with the jobs.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.store.core.schema import engine_marks

PREFIX = "sealing key "


async def marked_keys(conn: AsyncConnection) -> set[str]:
    """The key ids marked as having sealed (empty: the store was never checked whole)."""
    names = await conn.execute(
        select(engine_marks.c.name).where(engine_marks.c.name.startswith(PREFIX))
    )
    return {name.removeprefix(PREFIX) for name in names.scalars()}


async def mark_keys(conn: AsyncConnection, ids: Iterable[str]) -> None:
    """Mark these key ids (those already marked, by this process or another, stay as they are)."""
    rows = [{"name": PREFIX + kid, "value": 0} for kid in sorted(set(ids))]
    if not rows:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    await conn.execute(
        dialect.insert(engine_marks).on_conflict_do_nothing(index_elements=["name"]), rows
    )


async def unmark_keys(conn: AsyncConnection, ids: Iterable[str]) -> None:
    """Forget these key ids (after a complete pass found nothing they sealed)."""
    names = [PREFIX + kid for kid in ids]
    if names:
        await conn.execute(delete(engine_marks).where(engine_marks.c.name.in_(names)))
