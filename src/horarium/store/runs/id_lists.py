"""Id lists bound as one parameter: `in_ids(column)` is `column IN <a list of ids>`, the whole
list in one bind parameter (`:ids` unless named otherwise), whatever its length.

- PostgreSQL (the form for any database but SQLite): `column = ANY(:ids)`, the list bound as a
  `bigint[]` (ids are 64-bit since migration 0015; an `integer` column compares with it through
  its index too).
- SQLite: `column IN (SELECT value FROM json_each(:ids))`, the list bound as JSON text.

Callers pass a plain list of ints (`{"ids": ids}`); `IdList` converts it for the database the
statement runs on, and one statement (module-level or built per database) serves both. An empty
list matches no row.

Why not SQLAlchemy's expanding `IN`: it renders every id into the SQL at each execution, and
each length of list is another SQL text, which SQLite's statement cache and asyncpg's prepared
statements miss. Here the SQL text is the same for any list and nothing is rendered per
execution. Both forms are planned as searches of the column's index
(tests/test_store_query_plans.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import BigInteger, Boolean, String, bindparam
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import TypeDecorator, TypeEngine


class IdList(TypeDecorator[Sequence[int]]):
    """A list of ids as one parameter: a `bigint[]` on PostgreSQL, JSON text on SQLite."""

    impl = String
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(ARRAY(BigInteger()))
        return dialect.type_descriptor(String())

    def process_bind_param(self, value: Sequence[int] | None, dialect: Dialect) -> Any:
        if value is None or dialect.name == "postgresql":
            return value
        return json.dumps(value)


class InIds(ColumnElement[bool]):
    """`column IN <ids>` with the ids in one parameter (compiled per dialect, below)."""

    inherit_cache = True
    _is_implicitly_boolean = True  # no `= 1` after it where booleans are integers (SQLite)
    # What SQLAlchemy's cache key of a statement reads of it (its form in SQLAlchemy's own classes).
    _traverse_internals: list[tuple[str, InternalTraversal]] = [  # noqa: RUF012
        ("column", InternalTraversal.dp_clauseelement),
        ("ids", InternalTraversal.dp_clauseelement),
    ]
    type = Boolean()

    def __init__(self, column: ColumnElement[Any], ids: BindParameter[Sequence[int]]) -> None:
        self.column = column
        self.ids = ids


def in_ids(column: ColumnElement[Any], name: str = "ids") -> InIds:
    """`column` is one of the ids bound as `name` (a list of ints at execution)."""
    return InIds(column, bindparam(name, type_=IdList()))


@compiles(InIds)
def _any(element: InIds, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.column, **kw)
    return f"{column} = ANY ({compiler.process(element.ids, **kw)})"


@compiles(InIds, "sqlite")
def _json_each(element: InIds, compiler: SQLCompiler, **kw: Any) -> str:
    column = compiler.process(element.column, **kw)
    return f"{column} IN (SELECT value FROM json_each({compiler.process(element.ids, **kw)}))"
