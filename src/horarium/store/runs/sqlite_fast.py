"""SQLite's dialect (`SQLiteDialect`, the plain form), and the fast path of the record
statements the engine uses on SQLite (`FastSQLiteDialect`): instants bound as the text SQLite
stores (converted once per distinct instant, not once per placeholder), and rows handed to the
driver as plain tuples, skipping SQLAlchemy's per-row parameter processing.

The two are equivalent: tests/engine/test_sqlite_fast_path.py writes the same attempts both ways
and compares the rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from operator import itemgetter
from typing import Any

from sqlalchemy import String
from sqlalchemy.engine import Connection
from sqlalchemy.sql import Select
from sqlalchemy.types import TypeEngine

from horarium.store.runs.dialect import RunDialect

Compiled = tuple[str, dict[str, Any], Callable[[Mapping[str, Any]], tuple[Any, ...]]]


class SQLiteDialect(RunDialect):
    name = "sqlite"
    due_jobs_before_collections = False  # SQLite plans the join in index order either way

    def lock(self, query: Select[Any], *, skip_locked: bool = False, of: Any = None) -> Select[Any]:
        return query  # the transaction holds the database's write lock already


class FastSQLiteDialect(SQLiteDialect):
    def __init__(self) -> None:
        # Per statement: its SQL, its own constants, and how a row becomes a parameter tuple.
        self._compiled: dict[int, Compiled] = {}

    def stamp_type(self) -> TypeEngine[Any]:
        return String()

    def stamper(self) -> Callable[[datetime | None], str | None]:
        seen: dict[datetime, str | None] = {}

        def stamp(instant: datetime | None) -> str | None:
            if instant is None:
                return None
            found = seen.get(instant)
            if found is None:
                found = seen[instant] = sqlite_text(instant)
            return found

        return stamp

    def execute_many(self, conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        found = self._compiled.get(id(statement))
        if found is None:
            found = self._compiled[id(statement)] = _compile(statement, conn, rows[0])
        sql, constants, parameters = found
        if constants:
            for row in rows:
                row.update(constants)
        conn.exec_driver_sql(sql, [parameters(row) for row in rows])


def sqlite_text(instant: datetime) -> str:
    """An instant as `UTCDateTime` stores it in SQLite: naive UTC, `YYYY-MM-DD HH:MM:SS.ffffff`."""
    if instant.tzinfo is not UTC:
        if instant.tzinfo is None:
            raise ValueError("naive datetime given to a UTCDateTime column")
        instant = instant.astimezone(UTC)
    return instant.isoformat(" ", "microseconds")[:26]  # without "+00:00"


def _compile(statement: Any, conn: Connection, row: Mapping[str, Any]) -> Compiled:
    """The statement's positional SQL; its own constants under keys of their own, so that one
    itemgetter makes a row's parameter tuple. Values the rows give must need no conversion."""
    dialect = conn.dialect
    compiled = statement.compile(dialect=dialect)
    constants: dict[str, Any] = {}
    keys: list[str] = []
    for position, name in enumerate(compiled.positiontup or ()):
        bind = compiled.binds[name]
        convert = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if name in row:
            if convert is not None:
                raise TypeError(f"{name}: the driver would need a converted value")
            keys.append(name)
        else:
            key = f" constant {position}"
            value = bind.effective_value
            if isinstance(value, Enum):
                value = value.value  # a plain `str`, as the rows give theirs (recording.py)
            constants[key] = convert(value) if convert is not None else value
            keys.append(key)
    return compiled.string, constants, _tuple_of(keys)


def _tuple_of(keys: Sequence[str]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    if len(keys) == 1:
        key = keys[0]
        return lambda row: (row[key],)
    getter: Callable[[Mapping[str, Any]], tuple[Any, ...]] = itemgetter(*keys)
    return getter
