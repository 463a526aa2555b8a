"""Nodes: each engine process keeps a row in `nodes` and beats it every few seconds. The
executions leased by a node whose last beat is older than the node timeout are taken over by
whichever node notices first: their leases end now, and the node's row goes.

Lock order: a takeover locks the stale nodes' rows (`SKIP LOCKED`: two nodes noticing at once
do not wait for each other), then job rows and job_executions rows in id order
(`leases.expire_gone`); a beat locks its own row only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, delete, func, insert, select, text, update
from sqlalchemy.engine import Connection

from horarium.store.core.revisions import REVISION
from horarium.store.core.schema import nodes
from horarium.store.runs import leases
from horarium.store.runs.statements import Statements
from horarium.store.runs.transact import Transactor

_ID = bindparam("node", type_=nodes.c.id.type)
_BEAT = (
    update(nodes)
    .where(nodes.c.id == _ID)
    .values(
        last_beat=bindparam("now", type_=nodes.c.last_beat.type),
        clock_offset=bindparam("offset", type_=nodes.c.clock_offset.type),
    )
)
_FORGET = delete(nodes).where(nodes.c.id == _ID)
_REVISION_AND_TIME = select(text("version_num"), func.clock_timestamp().label("now")).select_from(
    text("alembic_version")
)


@dataclass(frozen=True)
class Node:
    """One engine process: `id` is its lease owner id."""

    id: str
    host: str
    pid: int
    started: datetime
    version: str
    schema_revision: str | None  # the newest migration the node's code knows


@dataclass(frozen=True)
class Look:
    """What a node reads of the database at each beat: the migration its schema is at, and its
    clock (None: not read, as on SQLite, where every process reads the host's clock)."""

    schema_revision: str | None
    database_time: datetime | None


@dataclass(frozen=True)
class Takeover:
    """Nodes found gone and how many executions of theirs were handed to the cluster."""

    nodes: Sequence[str]
    executions: int


def look(conn: Connection) -> Look:
    """The schema's migration, and on PostgreSQL the database's clock."""
    if conn.dialect.name != "postgresql":
        return Look(conn.execute(REVISION).scalar(), None)
    row = conn.execute(_REVISION_AND_TIME).one_or_none()
    return Look(None, None) if row is None else Look(row.version_num, row.now)


def beat(conn: Connection, node: Node, now: datetime, offset: float | None) -> bool:
    """Write `node`'s heartbeat (and its clock's measured `offset`); False when its row was
    missing (first beat, or the others took it for gone and took its executions over): the
    row is made again."""
    if conn.execute(_BEAT, {"node": node.id, "now": now, "offset": offset}).rowcount:
        return True
    conn.execute(
        insert(nodes).values(
            id=node.id,
            host=node.host,
            pid=node.pid,
            started=node.started,
            last_beat=now,
            version=node.version,
            schema_revision=node.schema_revision,
            clock_offset=offset,
        )
    )
    return False


def take_over(
    conn: Connection, sql: Statements, me: str, now: datetime, cutoff: datetime
) -> Takeover:
    """End the leases of the nodes whose last beat is before `cutoff` (not `me`), and remove
    their rows."""
    stale = sql.dialect.lock(
        select(nodes.c.id).where(nodes.c.last_beat < cutoff, nodes.c.id != me).order_by(nodes.c.id),
        skip_locked=True,
    )
    gone = set(conn.execute(stale).scalars())
    if not gone:
        return Takeover((), 0)
    taken = leases.expire_gone(conn, sql, now, gone.__contains__)
    for node_id in sorted(gone):
        conn.execute(_FORGET, {"node": node_id})
    return Takeover(sorted(gone), taken)


def forget(conn: Connection, node_id: str) -> None:
    """Remove the node's row (it stopped, having handed back what it held)."""
    conn.execute(_FORGET, {"node": node_id})


class Nodes:
    """The heartbeat table, for one node."""

    def __init__(self, transactor: Transactor, sql: Statements, node: Node) -> None:
        self._transactor = transactor
        self._sql = sql
        self.node = node

    async def look(self) -> Look:
        return await self._transactor.read(look, "reading the schema's revision and the time")

    async def beat(self, now: datetime, offset: float | None = None) -> bool:
        return await self._transactor.write(
            lambda conn: beat(conn, self.node, now, offset), "heartbeat"
        )

    async def take_over(self, now: datetime, cutoff: datetime) -> Takeover:
        return await self._transactor.write(
            lambda conn: take_over(conn, self._sql, self.node.id, now, cutoff),
            "taking over the executions of nodes that are gone",
        )

    async def forget(self) -> None:
        await self._transactor.write(lambda conn: forget(conn, self.node.id), "removing the node")
