"""PostgreSQL's dialect as the engine runs it (`ArrayDialect`): a record's history rows go to
the server as one `INSERT … SELECT FROM unnest(…)` of one array per column, rather than one
INSERT per row — one statement executed once for the batch.

Equivalent to the plain form (`RunDialect`: an executemany of `Statements.insert_history`):
tests/engine/test_history_arrays.py writes the same attempts both ways and compares the rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection

from horarium.store.core.schema import job_history
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.statements import HISTORY_ENTRY

_INSERT_ROWS = text(
    f"INSERT INTO job_history ({', '.join(HISTORY_ENTRY)})"
    f" SELECT * FROM unnest({', '.join(f':{column}' for column in HISTORY_ENTRY)})"
).bindparams(
    *(bindparam(column, type_=ARRAY(job_history.c[column].type)) for column in HISTORY_ENTRY)
)


class ArrayDialect(RunDialect):
    def write_history(self, conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        if rows:
            arrays = {column: [row[key] for row in rows] for column, key in HISTORY_ENTRY.items()}
            conn.execute(_INSERT_ROWS, arrays)
