"""The engine's side of the store: claim due work under a lease, hold it, record attempts.

A job's next execution lives in its row (`jobs.next_execution_at`, indexed). A process claims a
due job by writing its lease (`lease_owner`, `lease_expires_at`) on that row and runs the first
attempt; recording the attempt advances the job to its next execution, clears the lease and
writes history and status, in one transaction. While the lease holds, the row itself is the
durable record of the execution in flight: if the process dies, the lease runs out and another
process claims the same execution, with the same execution tag (derived from the job and the
occurrence, `store.core.tags`, so nothing has to be written before the first attempt).

An execution that continues after its first attempt (a retry, the error action) moves to a
`job_executions` row, as does a run-now request; there `due_at` is when the row may be claimed:
the next attempt's time, or, while claimed, the lease expiry — one indexed range
(`due_at <= now`) finds new work and work abandoned by a dead process alike.

Modules: `vocabulary` (the shared words), `statements` (the SQL), `claims`, `leases`,
`recording` (each a step on a `Connection`), `dialect` and `sqlite_fast` (what differs by
database), `store` (`RunStore`, what the engine needs; `Runs`, the facade on a database),
`transact` (how those transactions run). The engine's periodic work: `retention` (history and
ended jobs deleted), `outbox` (delivering collection notifications), `pauses` (ending pauses).
"""
