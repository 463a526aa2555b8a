"""`job_history` on PostgreSQL: range partitions of one UTC day by `end_time` (migration 0014;
SQLite keeps one plain table). Retention drops a day's partition whole once all of it is older
than the window, instead of deleting its rows one by one (docs/capacity.md).

The partitions, told apart by their names:

- `job_history_pYYYYMMDD`: the entries that ended that UTC day. The engine's cleanup makes
  today's and the next `AHEAD` days' in advance (`prepare_partitions`).
- `job_history_before_YYYYMMDD`: the table as it was when migration 0014 ran, every entry that
  ended before that day (it was attached, not copied). Its rows age out one by one as before;
  it is dropped whole once that day is older than the window.
- `job_history_default`: what no other partition takes, so that a write never fails: an entry
  whose day has no partition yet (written before the cleanup first ran, or after days of
  downtime), or without `end_time`. Its rows move to their day's partition when that is made.

Each partition has its own primary key on `id` (a key of the parent would have to include
`end_time`) and the parent's indexes, named `<parent index>_<suffix>`: the API's read of a job's
history, newest first by `id`, is one ordered merge of each partition's (job_id, id) index.

Partitions are made and dropped under a transaction-level advisory lock (a node that finds it
held leaves the work to the one holding it) and a short `lock_timeout`: attaching a partition
locks `jobs` (its foreign key) and dropping one locks `job_history`, each for a moment; a lock
not had in time is tried again at the next cleanup, so the engine's writes never wait long."""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import partial

from asyncpg.exceptions import LockNotAvailableError
from sqlalchemy import Column, MetaData, Table, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from horarium.store.core.db import write_transaction
from horarium.store.core.open_errors import causes
from horarium.store.core.schema import job_history, jobs

log = logging.getLogger(__name__)

PARENT = job_history.name
DEFAULT = f"{PARENT}_default"
AHEAD = 2  # days after today whose partitions are made in advance
LOCK_TIMEOUT = "1s"
ADVISORY_KEY = 7212346  # pg_advisory_xact_lock: one node at a time changes the partitions
DAY = timedelta(days=1)

_NAME = re.compile(rf"{PARENT}_(?:p(?P<day>\d{{8}})|before_(?P<before>\d{{8}})|default)")


@dataclass(frozen=True)
class Partition:
    """A partition of `job_history`: entries with `lower <= end_time < upper` (None: no bound;
    the default partition has neither)."""

    name: str
    lower: datetime | None
    upper: datetime | None

    @property
    def daily(self) -> bool:
        return self.lower is not None


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def _parse(name: str) -> Partition | None:
    found = _NAME.fullmatch(name)
    if found is None:
        return None
    if found["day"]:
        start = _midnight(datetime.strptime(found["day"], "%Y%m%d").date())
        return Partition(name, start, start + DAY)
    if found["before"]:
        return Partition(name, None, _midnight(datetime.strptime(found["before"], "%Y%m%d").date()))
    return Partition(name, None, None)


def day_partition(day: date) -> str:
    return f"{PARENT}_p{day:%Y%m%d}"


async def partitions(conn: AsyncConnection) -> list[Partition] | None:
    """The partitions of `job_history`, oldest first (the default last); None when the table is
    not partitioned (SQLite, or a schema before migration 0014)."""
    if conn.dialect.name != "postgresql":
        return None
    kind = await conn.execute(
        text("SELECT relkind::text FROM pg_class WHERE oid = to_regclass(:t)"), {"t": PARENT}
    )
    if kind.scalar() != "p":
        return None
    names = await conn.execute(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = to_regclass(:t)"
        ),
        {"t": PARENT},
    )
    found = [p for p in (_parse(name) for name in names.scalars()) if p is not None]
    oldest = datetime.max.replace(tzinfo=UTC)
    return sorted(found, key=lambda p: (p.upper is None, p.lower or p.upper or oldest))


def index_statements(partition: str) -> list[str]:
    """The primary key and the parent's indexes, made on a table before it is attached as
    `partition` (the attachment adopts indexes of the same definition)."""
    suffix = partition.removeprefix(f"{PARENT}_")
    made = [f"ALTER TABLE {partition} ADD CONSTRAINT pk_{partition} PRIMARY KEY (id)"]
    for index in sorted(job_history.indexes, key=lambda i: str(i.name)):
        columns = [column.name for column in index.columns]
        name = f"ix_{PARENT}_{'_'.join(columns)}_{suffix}"
        method = index.dialect_options["postgresql"]["using"]
        using = f"USING {method} " if method else ""
        made.append(f"CREATE INDEX {name} ON {partition} {using}({', '.join(columns)})")
    return made


async def prepare_partitions(db: AsyncEngine, now: datetime) -> int:
    """Make the partitions of today and the next `AHEAD` days that are missing; returns how many
    were made (0 on SQLite, or when another node holds the lock)."""
    async with db.connect() as conn:
        existing = await partitions(conn)
    if existing is None:
        return 0
    today = now.astimezone(UTC).date()
    missing = [d for d in (today + DAY * n for n in range(AHEAD + 1)) if not _covered(existing, d)]
    made = 0
    for day in missing:
        if not await _locked(db, partial(_make_day, day=day)):
            break
        made += 1
    return made


def _covered(existing: list[Partition], day: date) -> bool:
    start = _midnight(day)
    return any(
        p.upper is not None and (p.lower or start) <= start and start + DAY <= p.upper
        for p in existing
    )


async def _make_day(conn: AsyncConnection, day: date) -> bool:
    """Make the partition of `day`: a table of the parent's form, the entries the default
    partition holds for that day moved into it, then attached; False when another node made it
    meanwhile."""
    name, lower = day_partition(day), _midnight(day)
    if await _exists(conn, name):
        return False
    bounds = {"lower": lower, "upper": lower + DAY}
    await conn.execute(text(f"CREATE TABLE {name} (LIKE {PARENT} INCLUDING DEFAULTS)"))
    for statement in index_statements(name):
        await conn.execute(text(statement))
    # The attachment's locks, taken in the engine's order (a record locks `jobs`, then writes
    # history, perhaps into the default partition): `jobs` for the foreign key, then the
    # default partition, which it reads and from which no row of the day may come meanwhile.
    await conn.execute(text(f"LOCK TABLE {jobs.name} IN SHARE ROW EXCLUSIVE MODE"))
    await conn.execute(text(f"LOCK TABLE {DEFAULT} IN ACCESS EXCLUSIVE MODE"))
    await conn.execute(
        text(
            f"WITH moved AS (DELETE FROM {DEFAULT} WHERE end_time >= :lower AND end_time < :upper"
            f" RETURNING *) INSERT INTO {name} SELECT * FROM moved"
        ),
        bounds,
    )
    await conn.execute(
        text(
            f"ALTER TABLE {PARENT} ATTACH PARTITION {name}"
            f" FOR VALUES FROM ('{lower.isoformat()}') TO ('{(lower + DAY).isoformat()}')"
        )
    )
    return True


async def _exists(conn: AsyncConnection, name: str) -> bool:
    found = await conn.execute(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": name})
    return bool(found.scalar())


async def drop_partitions_before(db: AsyncEngine, cutoff: datetime) -> int:
    """Drop the partitions whose every entry ended before `cutoff`; returns how many."""
    async with db.connect() as conn:
        existing = await partitions(conn)
    dropped = 0
    for partition in existing or []:
        if partition.upper is None or partition.upper > cutoff:
            continue
        name = partition.name
        if not await _locked(db, partial(_drop, name=name)):
            break
        dropped += 1
    return dropped


async def _drop(conn: AsyncConnection, name: str) -> bool:
    """Drop the partition `name`; False when another node dropped it meanwhile."""
    if not await _exists(conn, name):
        return False
    await conn.execute(text(f"DROP TABLE {name}"))
    return True


def aged_by_rows(existing: list[Partition]) -> list[Table]:
    """The partitions whose rows age out one by one (`retention.delete_history_before`): those
    that are not one day's (the default, the table from before migration 0014)."""
    return [_partition_table(p.name) for p in existing if not p.daily]


def _partition_table(name: str) -> Table:
    """The columns of `job_history` that retention reads, as a partition's own table."""
    return Table(name, MetaData(), *(Column(c.name, c.type) for c in job_history.c))


async def _locked(db: AsyncEngine, change: Callable[[AsyncConnection], Awaitable[bool]]) -> bool:
    """Run `change(conn)` in a transaction holding the partitions' advisory lock, with a short
    lock timeout; what it returns, or False when the lock is held by another node or a table
    lock was not had in time (the next cleanup tries again)."""
    try:
        async with write_transaction(db) as conn:
            taken = await conn.execute(text(f"SELECT pg_try_advisory_xact_lock({ADVISORY_KEY})"))
            if not taken.scalar():
                return False
            await conn.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
            return await change(conn)
    except Exception as exc:
        if not any(isinstance(e, LockNotAvailableError) for e in causes(exc)):
            raise
        log.warning("history partitions: a table was busy; trying again at the next cleanup")
        return False
