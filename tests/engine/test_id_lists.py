"""`store.runs.id_lists`: a list of ids bound as one parameter selects exactly the rows of the
list, whatever its length (none, one, many, ids past 2^31), with one SQL text for every length;
on SQLite and on PostgreSQL."""

from __future__ import annotations

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.schema import notifications
from horarium.store.runs.id_lists import in_ids
from tests.engine.engine_support import T0
from tests.support import captured

BIG = 2**31 + 7  # past the largest int4: the id columns that grow are 64-bit
IDS = [1, 2, 3, 5, 8, BIG]


async def test_an_id_list_selects_the_rows_it_lists_with_one_sql_text(db: AsyncEngine) -> None:
    row = {"collection_id": 1, "event": "JobFaulted", "body": "{}", "created_at": T0, "due_at": T0}
    async with db.begin() as conn:
        await conn.execute(insert(notifications), [{"id": i, **row} for i in IDS])
    chosen = select(notifications.c.id).where(in_ids(notifications.c.id)).order_by("id")
    asked: list[list[int]] = [[], [2], [BIG, 1, 4], list(range(1000)), [*IDS, BIG, 2]]
    with captured(db) as seen:
        async with db.connect() as conn:
            found = [(await conn.execute(chosen, {"ids": ids})).scalars().all() for ids in asked]
    assert found == [[], [2], [1, BIG], [1, 2, 3, 5, 8], IDS]
    assert len(seen) == len(asked) and len({sql for sql, _ in seen}) == 1, seen

    async with db.begin() as conn:
        gone = await conn.execute(
            delete(notifications).where(in_ids(notifications.c.id)), {"ids": [3, BIG]}
        )
        assert gone.rowcount == 2
        left = (await conn.execute(select(notifications.c.id).order_by("id"))).scalars().all()
    assert left == [1, 2, 5, 8]
