"""Leases: a process holds its claimed executions by renewing their leases; it gives them back
when it stops; the leases of processes known to be gone are ended at once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from horarium.store.runs.statements import NO_COLLECTION, Statements
from horarium.store.runs.vocabulary import Claimed


def renew(
    conn: Connection,
    sql: Statements,
    owner: str,
    held: Sequence[Claimed],
    until: Callable[[], datetime],
) -> None:
    """Extend `owner`'s leases on `held` to `until()` (those it no longer holds are left alone).
    Job rows first, then job_executions rows, each locked in id order, passing over rows another
    transaction holds (never waiting: this process's record of them is under way, or the next
    renewal extends them); `until()` is read once they are locked."""
    _set_leases(conn, sql, owner, held, until, (sql.free_own_jobs, sql.free_own_runs))


def release(
    conn: Connection, sql: Statements, owner: str, held: Sequence[Claimed], now: datetime
) -> None:
    """End `owner`'s leases on `held` now (any process may run them), waiting for rows another
    transaction holds."""
    _set_leases(conn, sql, owner, held, lambda: now, (sql.own_jobs, sql.own_runs))


def _set_leases(
    conn: Connection,
    sql: Statements,
    owner: str,
    held: Sequence[Claimed],
    until: Callable[[], datetime],
    locks: tuple[Any, Any],
) -> None:
    """Set `owner`'s leases on the rows of `held` that `locks` lock (job rows, then
    job_executions rows) to end at `until()`, read once they are locked."""
    lock_jobs, lock_runs = locks
    job_ids = _locked(conn, lock_jobs, sorted(c.job.id for c in held if c.run_id is None), owner)
    run_ids = _locked(
        conn, lock_runs, sorted(c.run_id for c in held if c.run_id is not None), owner
    )
    end = until()
    if job_ids:
        conn.execute(sql.renew_jobs, {"ids": job_ids, "owner": owner, "until": end})
    if run_ids:
        conn.execute(sql.renew_runs, {"ids": run_ids, "owner": owner, "until": end})


def expire_gone(
    conn: Connection, sql: Statements, now: datetime, gone: Callable[[str], bool]
) -> int:
    """End, now, the leases of owners known to be gone (`gone(owner)`); returns how many.

    The leased rows are read without locks; those of gone owners are then locked in id order
    (jobs, then job_executions) on the condition that the same owner still holds them, so a
    lease that changed hands meanwhile is left alone."""
    jobs_of: dict[int, str] = {}
    runs_of: dict[int, str] = {}
    for row in conn.execute(sql.leased_jobs, {"now": now}):
        if gone(row[1]):
            jobs_of[row.id] = row[1]
    for row in conn.execute(sql.leased_runs, {"now": now}):
        if gone(row[1]):
            runs_of[row.id] = row[1]
    owners = sorted(set(jobs_of.values()) | set(runs_of.values()))
    if not owners:
        return 0
    job_ids = _locked(conn, sql.jobs_held_by, sorted(jobs_of), owners=owners)
    run_ids = _locked(conn, sql.runs_held_by, sorted(runs_of), owners=owners)
    if job_ids:
        conn.execute(sql.expire_jobs, {"ids": job_ids, "now": now})
    if run_ids:
        conn.execute(sql.expire_runs, {"ids": run_ids, "now": now})
    return len(job_ids) + len(run_ids)


def _locked(
    conn: Connection,
    statement: Any,
    ids: Sequence[int],
    owner: str | None = None,
    owners: Sequence[str] = (),
) -> list[int]:
    """Lock the rows of `ids` that `statement` selects, in id order; returns their ids."""
    if not ids:
        return []
    params: dict[str, Any] = {"ids": ids}
    if owner is not None:
        params["owner"] = owner
    if owners:
        params["owners"] = list(owners)
    return list(conn.execute(statement, params).scalars())


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
