"""Leases: a process holds its claimed executions by renewing their leases; it gives them back
when it stops; the leases of processes known to be gone are ended at once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy.engine import Connection

from horarium.store.runs.statements import NO_COLLECTION, Statements, chunks
from horarium.store.runs.vocabulary import Claimed


def renew(
    conn: Connection, sql: Statements, owner: str, held: Sequence[Claimed], until: datetime
) -> None:
    """Extend `owner`'s leases on `held` to `until` (those it no longer holds are left alone)."""
    job_ids = sorted(c.job.id for c in held if c.run_id is None)
    run_ids = sorted(c.run_id for c in held if c.run_id is not None)
    for ids in chunks(job_ids):
        conn.execute(sql.renew_jobs, {"ids": ids, "owner": owner, "until": until})
    for ids in chunks(run_ids):
        conn.execute(sql.renew_runs, {"ids": ids, "owner": owner, "until": until})


def expire_gone(
    conn: Connection, sql: Statements, now: datetime, gone: Callable[[str], bool]
) -> int:
    """End, now, the leases of owners known to be gone (`gone(owner)`); returns how many."""
    job_ids = [row.id for row in conn.execute(sql.leased_jobs, {"now": now}) if gone(row[1])]
    run_ids = [row.id for row in conn.execute(sql.leased_runs, {"now": now}) if gone(row[1])]
    for ids in chunks(sorted(job_ids)):
        conn.execute(sql.expire_jobs, {"ids": ids, "now": now})
    for ids in chunks(sorted(run_ids)):
        conn.execute(sql.expire_runs, {"ids": ids, "now": now})
    return len(job_ids) + len(run_ids)


def next_due(conn: Connection, sql: Statements, full: Sequence[int] = ()) -> datetime | None:
    """The earliest instant new work falls due: a job's next execution nobody holds, a retry, a
    run-now request, a lease expiry — of a collection not in `full`."""
    params = {"full": [NO_COLLECTION, *full]}
    times = [
        conn.execute(sql.next_job, params).scalar(),
        conn.execute(sql.next_run, params).scalar(),
    ]
    found = [t for t in times if t is not None]
    return min(found) if found else None
