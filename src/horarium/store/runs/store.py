"""What the engine needs from its store (`RunStore`), and `Runs`, the store on a database (in
the database's dialect: `dialect_of`): each operation one transaction, run whole by
`store.runs.transact.Transactor`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.store.core.sealing import keyring_of
from horarium.store.runs import deadlines, leases, recording
from horarium.store.runs.claims import Claimer
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.nodes import Node, Nodes
from horarium.store.runs.pg_arrays import ArrayDialect
from horarium.store.runs.sqlite_fast import FastSQLiteDialect
from horarium.store.runs.statements import Statements
from horarium.store.runs.transact import Transactor
from horarium.store.runs.vocabulary import Attempt, Claimed, Decision, DueJob, Shares


def dialect_of(db: AsyncEngine) -> RunDialect:
    """The dialect the engine uses on `db`: on SQLite its fast path, else PostgreSQL's with a
    record's history rows in one statement."""
    if db.dialect.name == "sqlite":
        return FastSQLiteDialect()
    return ArrayDialect()


class RunStore(Protocol):
    """The engine's store: claims, leases and records for one engine process (`owner`)."""

    @property
    def owner(self) -> str: ...

    async def claim(
        self,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        decide: Callable[[DueJob], Decision],
        horizon: datetime | None = None,
        shares: Shares | None = None,
    ) -> list[Claimed]:
        """Lease up to `limit` executions due by `horizon` (default: now) to this process
        until `until()`, read as the store writes the leases (a claim kept waiting or busy
        still gives whole leases): continuing executions and run-now requests first, then due
        jobs, whose execution `decide` chooses (missed ones are written as Postponed); none
        beyond what `shares` gives their collection."""
        ...

    async def renew(self, held: Sequence[Claimed], until: Callable[[], datetime]) -> None:
        """Extend this process's leases on `held` to `until()`, read once the store has
        locked their rows; rows another transaction holds are passed over (a renewal never
        waits: its own record of them is under way, or the next renewal extends them)."""
        ...

    async def release(self, held: Sequence[Claimed], now: datetime) -> None:
        """Give back executions this process will not finish: any process may run them now."""
        ...

    async def expire_gone_leases(self, now: datetime, gone: Callable[[str], bool]) -> int:
        """End now the leases of owners for which `gone(owner)`; returns how many."""
        ...

    async def next_due(self, full: Sequence[int] = ()) -> datetime | None:
        """The earliest instant new work falls due, if any, leaving out the collections
        `full` (that may be given nothing more)."""
        ...

    async def mark_started(self, started: Sequence[Claimed], now: datetime) -> None:
        """The first attempts of jobs with deadlines started at `now` (`deadlines.started`)."""
        ...

    async def record(self, attempts: Sequence[Attempt], now: datetime) -> set[str]:
        """Write finished attempts of executions still held; returns their `Claimed.key`s."""
        ...

    async def close(self) -> None:
        """Let go of the connections the store holds."""
        ...


class Runs:
    """`RunStore` on a database (SQLite or PostgreSQL)."""

    def __init__(self, db: AsyncEngine, owner: str, dialect: RunDialect | None = None) -> None:
        """`dialect`: the database's own unless given (tests compare the SQLite forms)."""
        self.db = db
        self._owner = owner
        self._sql = Statements(dialect or dialect_of(db))
        self.transactor = Transactor(db)

    @property
    def owner(self) -> str:
        return self._owner

    async def claim(
        self,
        now: datetime,
        limit: int,
        until: Callable[[], datetime],
        decide: Callable[[DueJob], Decision],
        horizon: datetime | None = None,
        shares: Shares | None = None,
    ) -> list[Claimed]:
        claimer = Claimer(self._sql, self._owner, keyring_of(self.db))
        return await self.transactor.write(
            lambda conn: claimer.claim(conn, now, limit, until, decide, horizon or now, shares),
            "claim",
        )

    async def renew(self, held: Sequence[Claimed], until: Callable[[], datetime]) -> None:
        await self.transactor.write(
            lambda conn: leases.renew(conn, self._sql, self._owner, held, until), "lease renewal"
        )

    async def release(self, held: Sequence[Claimed], now: datetime) -> None:
        await self.transactor.write(
            lambda conn: leases.release(conn, self._sql, self._owner, held, now), "lease release"
        )

    async def expire_gone_leases(self, now: datetime, gone: Callable[[str], bool]) -> int:
        return await self.transactor.write(
            lambda conn: leases.expire_gone(conn, self._sql, now, gone), "taking over leases"
        )

    async def next_due(self, full: Sequence[int] = ()) -> datetime | None:
        return await self.transactor.read(
            lambda conn: leases.next_due(conn, self._sql, full), "looking for due work"
        )

    async def mark_started(self, started: Sequence[Claimed], now: datetime) -> None:
        await self.transactor.write(
            lambda conn: deadlines.started(conn, started, now), "marking deadline starts"
        )

    async def record(self, attempts: Sequence[Attempt], now: datetime) -> set[str]:
        if not attempts:
            return set()
        return await self.transactor.write(
            lambda conn: recording.record(conn, self._sql, self._owner, attempts, now),
            f"recording {len(attempts)} attempts",
        )

    def nodes(self, node: Node) -> Nodes:
        """The heartbeat table, for `node` (this process: its id is `owner`)."""
        return Nodes(self.transactor, self._sql, node)

    async def close(self) -> None:
        await self.transactor.close()
