"""PostgreSQL's dialect as the engine runs it (`CopyDialect`): a record's history rows go to
the server in one `COPY` (asyncpg's binary copy) rather than one INSERT per row — one statement
for the batch, and PostgreSQL logs them as multi-row WAL records.

Equivalent to the plain form (`RunDialect`: an executemany of `Statements.insert_history`):
tests/engine/test_history_copy.py writes the same attempts both ways and compares the rows."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.util import await_only

from horarium.store.core.schema import job_history
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.statements import HISTORY_ENTRY

_COLUMNS = list(HISTORY_ENTRY)
_KEYS = list(HISTORY_ENTRY.values())


class CopyDialect(RunDialect):
    def write_history(self, conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        records = [tuple(row[key] for key in _KEYS) for row in rows]
        # The asyncpg connection of this transaction, which the record's lock statements have
        # begun (the engine's statements run under `AsyncConnection.run_sync`, in a greenlet
        # that may await).
        driver = conn.connection.driver_connection
        assert driver is not None
        await_only(
            driver.copy_records_to_table(job_history.name, records=records, columns=_COLUMNS)
        )
