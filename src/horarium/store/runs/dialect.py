"""What differs between SQLite and PostgreSQL in the engine's SQL: the interface (`RunDialect`),
with PostgreSQL's behaviour as its default; SQLite's is `sqlite_fast`, and `store.dialect_of`
chooses a database's.

PostgreSQL: several processes claim at once, so candidate rows are locked with
`FOR NO KEY UPDATE SKIP LOCKED` and rows about to be updated with `FOR NO KEY UPDATE`, in id
order (docs/engine.md, "Lock order"). The engine never changes a key column, so the weaker
`NO KEY` lock is enough, and it lets foreign-key checks (a history row inserted for a job) pass.
SQLite: one writer at a time (each engine transaction starts with `BEGIN IMMEDIATE`), so no row
locks."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.sql import Select
from sqlalchemy.types import TypeEngine

from horarium.store.core.types import UTCDateTime


class RunDialect:
    """PostgreSQL's behaviour, the default."""

    name = "postgresql"
    # Choose the due jobs from `jobs` alone (the collection's state as a NOT EXISTS) and join
    # the collection to the chosen ones: without statistics PostgreSQL's planner would otherwise
    # loop over every collection's jobs and sort every due row before the LIMIT.
    due_jobs_before_collections = True

    def lock(self, query: Select[Any], *, skip_locked: bool = False, of: Any = None) -> Select[Any]:
        """`query` locking the rows it reads (of table `of`) until the transaction ends;
        `skip_locked`: rows another transaction holds are passed over."""
        return query.with_for_update(skip_locked=skip_locked, of=of, key_share=True)

    def stamp_type(self) -> TypeEngine[Any]:
        """How the record statements bind an instant."""
        return UTCDateTime()

    def stamper(self) -> Any:
        """A function turning an instant into what `stamp_type` binds, for one transaction."""
        return _as_is

    def execute_many(self, conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        """`statement` once per row (executemany)."""
        if rows:
            conn.execute(statement, rows)

    def write_history(self, conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        """A record's history rows (`statement`: `Statements.insert_history`)."""
        self.execute_many(conn, statement, rows)


def _as_is(instant: datetime | None) -> datetime | None:
    return instant
