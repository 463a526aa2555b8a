"""Cluster benchmark: what one execution costs PostgreSQL and a worker, several `horarium
worker` processes on one database, and a million stored jobs.

    .venv/bin/python bench/cluster.py [--part cost,workers,million,retention]
        [--postgres postgresql://postgres@127.0.0.1:5432/test]
        [--jobs 5000] [--burst 3000] [--workers 1,2,3] [--stored 10000,1000000]
        [--databases sqlite,postgres] [--history-rows 10000000] [--history-jobs 10000]

Every part makes fresh PostgreSQL databases from `--postgres` (dropped after) and prints
Markdown tables with the load average of the machine when each figure was taken.

cost     the engine (`Scheduler`, default settings, in this process, the clock injected and
         `drain()` running what is due) runs `--jobs` one-time jobs, then `--jobs` recurring
         (hourly) jobs, all due at one instant, history and status written; first with a no-op
         action (the engine's own work), then with the HTTP action against a local sink.
         Measured per execution: the statements the engine sends (SQLAlchemy cursor events:
         round trips and rows), the WAL the database's transactions wrote (pg_walinspect over
         the run's LSN range, the records of this database only: other databases of the server
         write meanwhile; by record type: rows inserted, updated, locked), the CPU of the
         PostgreSQL backends serving the run (/proc/<pid>/stat of the pids pg_stat_activity
         lists for the database), this process's CPU; then the bytes per job of `jobs`,
         `job_history` and their indexes; then the arithmetic for 10,000 and 100,000
         executions/s (see docs/capacity.md for the assumptions).
workers  N = 1, 2, 3 `horarium worker` processes on one database, and first one `horarium
         serve` on a SQLite file (the rates are given as a ratio to it); a burst of `--burst`
         one-time jobs due at one instant, each an HTTP POST to a sink (another process) that
         counts the `x-ms-execution-tag` headers: executions/s, duplicates (a tag or a job
         delivered more than once), lost (a job never delivered or not Completed), the
         workers' CPU and the database's per execution.
million  `--stored` recurring jobs (70 % hourly, 20 % daily, 10 % weekly; nothing due for a
         day) inserted by SQL (generate_series / a recursive CTE), in collections of 1,000, on
         SQLite and PostgreSQL; then `horarium serve` (engine on) on it: seconds to /healthz,
         API p50/p99 of GET job, PUT job, list jobs (first page), its RSS after those
         requests; seconds to /healthz of a second start (the store now marked sealed); then
         the engine's due query (the claim's SELECT): its plan and its time with
         a batch due and with nothing due; the database's bytes per job.
retention `--history-rows` history entries of `--history-jobs` jobs, ending evenly over 61
         days (generate_series), in a store at migration 0012 (one table) and in one at the
         head (daily partitions); one retention pass (the cleanup's age rule) that removes the
         oldest day: wall time, WAL, the server's CPU, then VACUUM job_history; a job's history
         page (`--requests` reads) and the dashboard's jobs list (a collection's 1,000 jobs with
         their newest 10 entries); and the migration of the one table to partitions. Not in
         the default parts (it fills 2 × 10 M rows).

Not a test: prints tables. The machine's other work distorts wall-clock rates: compare CPU and
byte counts.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from support import (
    JOBS_PER_COLLECTION,
    LABELS,
    PG_DEFAULT,
    TICKS,
    Clock,
    NoAction,
    add_collections,
    completed_count,
    cpu_ticks,
    free_port,
    fresh_database,
    fresh_store,
    http_action,
    insert_jobs,
    job_row,
    load,
    load1,
    percentile,
    record_figures,
    rss_mb,
    run,
    sink,
    sink_reset,
    sink_seen,
    start_horarium,
    stop,
    store_burst,
    vacuum,
    wait_port,
)

API = {"api-version": "2016-03-01"}


# -- what a span of work costs the PostgreSQL server ---------------------------------------------


@dataclass
class Mark:
    lsn: str
    cpu: dict[int, int]  # backend pid -> CPU ticks


@dataclass
class ServerUse:
    """What a span of work cost the PostgreSQL server, for one database."""

    cpu_s: float
    wal_bytes: int
    fpi_bytes: int
    records: Counter[str]  # "table: Heap/UPDATE" -> count
    commits: int


_WAL_WORDS = {
    "Heap/INSERT": "rows inserted",
    "Heap/INSERT+INIT": "rows inserted",
    "Heap/UPDATE": "row versions, updates not HOT",
    "Heap/UPDATE+INIT": "row versions, updates not HOT",
    "Heap/HOT_UPDATE": "row versions, HOT updates",
    "Heap/LOCK": "row locks",
    "Heap/DELETE": "rows deleted",
    "Heap2/PRUNE": "pages pruned",
    "Heap2/MULTI_INSERT": "multi-row insert records (COPY)",
    "Heap2/MULTI_INSERT+INIT": "multi-row insert records (COPY)",
    "Btree/INSERT_LEAF": "entries inserted",
    "Btree/INSERT_POST": "entries inserted",
    "Transaction/COMMIT": "commits",
}


def wal_label(relation: str, manager: str, kind: str) -> str:
    """A WAL record's line in the tables: the table (its indexes together) and what it did."""
    table = re.sub(r"^(?:ix|pk)_(jobs|job_history)(?:_.*)?$", r"\1 indexes", relation)
    if relation.startswith(("ix_", "pk_")) and table == relation:
        table = "other indexes"
    what = _WAL_WORDS.get(f"{manager}/{kind}")
    if what is None:
        what = "index page work (splits, dedup, cleanup)" if manager == "Btree" else kind
        what = f"{manager}/{what}" if manager != "Btree" else what
    return f"{table}: {what}"


class Server:
    """Measures one database of the server: its backends' CPU and its WAL records."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: Any = None
        self.oid = 0
        self.slot = ""

    async def open(self) -> None:
        import asyncpg

        self.conn = await asyncpg.connect(self.url)
        await self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        self.oid = await self.conn.fetchval(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        )

    async def close(self) -> None:
        await self.conn.close()

    async def backends(self) -> list[int]:
        rows = await self.conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        )
        return [r["pid"] for r in rows]

    async def mark(self) -> Mark:
        # A temporary replication slot keeps the WAL from here on until `since` has read it
        # (checkpoints would recycle it meanwhile: the server's other databases write too).
        self.slot = f"bench_{uuid.uuid4().hex[:12]}"
        await self.conn.execute(
            "SELECT pg_create_physical_replication_slot($1, true, true)", self.slot
        )
        lsn = await self.conn.fetchval("SELECT pg_current_wal_insert_lsn()::text")
        return Mark(lsn, {pid: cpu_ticks(pid) for pid in await self.backends()})

    async def since(self, start: Mark) -> ServerUse:
        """The CPU of this database's backends and the WAL of its transactions since `start`
        (call before the backends go: a backend's CPU is read while it runs)."""
        cpu = sum(cpu_ticks(pid) - start.cpu.get(pid, 0) for pid in await self.backends())
        end = await self.flushed()
        rows = await self.conn.fetch(
            """
            WITH r AS (
                SELECT xid::text AS xid, resource_manager, record_type, record_length,
                       fpi_length,
                       substring(block_ref from 'rel \\d+/' || $3::text || '/(\\d+)') AS node
                FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)
            ), ours AS (SELECT DISTINCT xid FROM r WHERE node IS NOT NULL AND xid <> '0')
            SELECT coalesce(c.relname, '-') AS relation, resource_manager, record_type,
                   count(*) AS n, sum(record_length) AS bytes, sum(fpi_length) AS fpi
            FROM r LEFT JOIN pg_class c ON c.relfilenode::text = r.node
            WHERE r.node IS NOT NULL OR r.xid IN (SELECT xid FROM ours)
            GROUP BY 1, 2, 3
            """,
            start.lsn,
            end,
            str(self.oid),
        )
        await self.conn.execute("SELECT pg_drop_replication_slot($1)", self.slot)
        records: Counter[str] = Counter()
        commits = 0
        for r in rows:
            kind = r["record_type"].split()[0]
            records[wal_label(r["relation"], r["resource_manager"], kind)] += r["n"]
            if r["resource_manager"] == "Transaction" and kind.startswith("COMMIT"):
                commits += r["n"]
        return ServerUse(
            cpu_s=cpu / TICKS,
            wal_bytes=sum(int(r["bytes"]) for r in rows),
            fpi_bytes=sum(int(r["fpi"]) for r in rows),
            records=records,
            commits=commits,
        )

    async def flushed(self) -> str:
        """The WAL written so far, once flushed (pg_walinspect reads only flushed WAL; with
        `synchronous_commit = off` the last commits are flushed by the WAL writer later)."""
        end = await self.conn.fetchval("SELECT pg_current_wal_insert_lsn()::text")
        for _ in range(200):  # the WAL writer flushes every wal_writer_delay (200 ms)
            if await self.conn.fetchval(
                "SELECT pg_current_wal_flush_lsn() >= $1::text::pg_lsn", end
            ):
                break
            await asyncio.sleep(0.05)
        return str(end)

    async def sizes(self, tables: list[str]) -> dict[str, int]:
        """Bytes of each table (heap + TOAST) and of each of its indexes."""
        out: dict[str, int] = {}
        for table in tables:
            out[table] = await self.conn.fetchval("SELECT pg_table_size($1::regclass)", table)
            for r in await self.conn.fetch(
                "SELECT indexrelid::regclass::text AS name, pg_relation_size(indexrelid) AS size"
                " FROM pg_index WHERE indrelid = $1::regclass ORDER BY 1",
                table,
            ):
                out[f"  {r['name']}"] = r["size"]
        return out


# -- statements the engine sends -----------------------------------------------------------------

_TABLE = re.compile(r"\b(?:FROM|UPDATE|INTO)\s+(\w+)", re.IGNORECASE)


@dataclass
class Statements:
    calls: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)

    def listen(self, db: Any) -> None:
        from sqlalchemy import event

        event.listen(db.sync_engine, "before_cursor_execute", self._seen)

    def forget(self, db: Any) -> None:
        from sqlalchemy import event

        event.remove(db.sync_engine, "before_cursor_execute", self._seen)

    def _seen(
        self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: bool
    ) -> None:
        verb = statement.lstrip().split(None, 1)[0].upper()
        table = _TABLE.search(statement)
        kind = f"{verb} {table.group(1) if table else ''}".strip()
        if "FOR UPDATE" in statement:
            kind += " FOR UPDATE"
        self.calls[kind] += 1
        self.rows[kind] += len(params) if many and isinstance(params, list | tuple) else 1


# -- the cost of one execution -------------------------------------------------------------------


DUE = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # when every job of the cost part falls due
SET_AT = DUE - timedelta(days=1)


async def store_jobs(db: Any, n: int, url: str, recurring: bool, first: int) -> None:
    """`n` jobs (job{first}, ...) due at DUE, each a POST to `url`/jobI, hourly if `recurring`,
    in collections of 1,000; a transaction for the collections and one per 1,000 jobs."""
    count = (n + JOBS_PER_COLLECTION - 1) // JOBS_PER_COLLECTION
    async with db.begin() as conn:
        collections = await add_collections(conn, [f"c{first}-{c}" for c in range(count)], SET_AT)
    rows = []
    for i in range(n):
        definition: dict[str, Any] = {
            "startTime": DUE.isoformat(),
            "action": http_action(f"{url}/job{first + i}"),
        }
        if recurring:
            definition["recurrence"] = {"frequency": "Hour", "interval": 1}
        rows.append(
            job_row(collections[i // JOBS_PER_COLLECTION], first + i, definition, DUE, SET_AT)
        )
    for i in range(0, n, 1000):
        async with db.begin() as conn:
            await insert_jobs(conn, rows[i : i + 1000])


@dataclass
class Cost:
    label: str
    executions: int
    worker_cpu_us: float
    server_cpu_us: float
    wal_bytes: float
    fpi_bytes: float
    commits: float
    statements: float
    statement_rows: float
    records: dict[str, float]  # per execution
    calls: dict[str, float]  # per execution: (round trips, rows)
    load: float


async def measure_cost(url: str, action: str, sink_url: str, n: int) -> list[Cost]:
    """One-time, then recurring: `n` jobs each, due at DUE, run by one engine."""
    import gc

    from horarium.actions.runner import Actions
    from horarium.config import Settings
    from horarium.engine.gc_tuning import tune_gc
    from horarium.engine.scheduler import Scheduler
    from horarium.store.core.db import create_engine, migrate

    out: list[Cost] = []
    server = Server(url)
    await server.open()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), database=url)
        db = create_engine(settings.database_url)
        await migrate(db)
        for recurring in (False, True):
            first = len(out) * n
            await store_jobs(db, n, sink_url, recurring, first)
            await vacuum(db)
            gc.collect()
            tune_gc()
            runner: Any = NoAction() if action == "noop" else Actions(settings)
            async with runner as actions:
                clock = Clock(DUE + timedelta(seconds=30))  # the one-time jobs ran already
                scheduler = Scheduler(db, settings, actions, clock=clock, owner="bench:1:cost")
                seen = Statements()
                seen.listen(db)
                start = await server.mark()
                c0 = time.process_time()
                ran = await scheduler.dispatcher.drain()
                cpu = time.process_time() - c0
                use = await server.since(start)
                seen.forget(db)
                await scheduler.stop()
            kind = "recurring (hourly)" if recurring else "one-time"
            out.append(
                Cost(
                    label=f"{kind}, {action} action",
                    executions=ran,
                    worker_cpu_us=cpu / ran * 1e6,
                    server_cpu_us=use.cpu_s / ran * 1e6,
                    wal_bytes=use.wal_bytes / ran,
                    fpi_bytes=use.fpi_bytes / ran,
                    commits=use.commits / ran,
                    statements=sum(seen.calls.values()) / ran,
                    statement_rows=sum(seen.rows.values()) / ran,
                    records={k: v / ran for k, v in use.records.items()},
                    calls={k: seen.calls[k] / ran for k in seen.calls}
                    | {f"{k} (rows)": seen.rows[k] / ran for k in seen.rows},
                    load=load1(),
                )
            )
            if ran != n:
                print(f"cost: {ran} executions of {n}", file=sys.stderr)
        await db.dispose()
    await server.close()
    return out


async def table_sizes(url: str) -> dict[str, int]:
    server = Server(url)
    await server.open()
    try:
        await server.conn.execute("VACUUM ANALYZE jobs, job_history")
        sizes = await server.sizes(["jobs", "job_history"])
        sizes["rows: jobs"] = await server.conn.fetchval("SELECT count(*) FROM jobs")
        sizes["rows: job_history"] = await server.conn.fetchval("SELECT count(*) FROM job_history")
        return sizes
    finally:
        await server.close()


def print_costs(costs: list[Cost]) -> None:
    print("Per execution (PostgreSQL, one engine, batch 200, history and status written):\n")
    print(
        "| run | executions | worker CPU µs | PostgreSQL CPU µs | WAL bytes | of which full"
        " pages | write transactions | statements (round trips) | statement rows | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in costs:
        print(
            f"| {c.label} | {c.executions:,} | {c.worker_cpu_us:.0f} | {c.server_cpu_us:.0f}"
            f" | {c.wal_bytes:,.0f} | {c.fpi_bytes:,.0f} | {c.commits:.4f} | {c.statements:.3f}"
            f" | {c.statement_rows:.2f} | {c.load:.1f} |"
        )
    print("\nThe issue's figures per execution (from the WAL records below):\n")
    print_by_kind("figure", [(c.label, headline(c)) for c in costs], ",.2f", keep_order=True)
    print("\nWAL records per execution, by relation and type (what was written and locked):\n")
    print_by_kind("relation: record", [(c.label, c.records) for c in costs], ".3f")
    print("\nStatements per execution (round trips; rows = parameter sets):\n")
    print_by_kind("statement", [(c.label, c.calls) for c in costs], ".4f")


def headline(c: Cost) -> dict[str, float]:
    """WAL bytes, index entries (by table and in all) and `jobs` row versions per execution."""
    r = c.records
    jobs_entries = r.get("jobs indexes: entries inserted", 0.0)
    history_entries = r.get("job_history indexes: entries inserted", 0.0)
    hot = r.get("jobs: row versions, HOT updates", 0.0)
    not_hot = r.get("jobs: row versions, updates not HOT", 0.0)
    return {
        "WAL bytes": c.wal_bytes,
        "index entries, jobs": jobs_entries,
        "index entries, job_history": history_entries,
        "index entries, in all": jobs_entries + history_entries,
        "jobs row versions": hot + not_hot,
        "of which HOT": hot,
        "statements (round trips)": c.statements,
    }


def print_by_kind(
    heading: str, columns: list[tuple[str, dict[str, float]]], form: str, keep_order: bool = False
) -> None:
    """A table of a row per kind (sorted, or in the first column's order) and a column per
    (label, figure by kind)."""
    print(f"| {heading} | " + " | ".join(label for label, _ in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    kinds = {k: None for _, figures in columns for k in figures}
    for k in kinds if keep_order else sorted(kinds):
        values = " | ".join(f"{figures.get(k, 0):{form}}" for _, figures in columns)
        print(f"| {k} | {values} |")


def print_sizes(sizes: dict[str, int]) -> dict[str, float]:
    """Bytes per row of `jobs` and `job_history` and their indexes; returns the totals."""
    jobs_rows = max(1, sizes["rows: jobs"])
    history_rows = max(1, sizes["rows: job_history"])
    print(f"\nBytes per row ({jobs_rows:,} jobs, {history_rows:,} history rows, vacuumed):\n")
    print("| relation | bytes | bytes per row |")
    print("|---|---:|---:|")
    totals = {"jobs": 0.0, "job_history": 0.0}
    table = "jobs"
    for name, size in sizes.items():
        if name.startswith("rows:"):
            continue
        if not name.startswith(" "):
            table = name
        rows = jobs_rows if table == "jobs" else history_rows
        totals[table] += size / rows
        print(f"| {name.strip()} | {size:,} | {size / rows:,.0f} |")
    for table, per in totals.items():
        print(f"| **{table} with its indexes** | | **{per:,.0f}** |")
    return totals


# What docs/capacity.md assumes beyond the measurements: a worker process runs at 70 % of its
# core; in a steady stream a worker's record groups ~5 attempts (0.2 write transactions per
# execution, against ~1/120 in a burst); history is kept 60 days, one row per execution.
WORKER_SHARE = 0.7
STEADY_COMMITS = 0.2
RETENTION_DAYS = 60


def print_arithmetic(costs: list[Cost], per_row: dict[str, float], http_us: float) -> None:
    """The capacity arithmetic for 1,000, 10,000 and 100,000 executions/s, from the highest
    figure measured of each kind."""
    engine_us = max(c.worker_cpu_us for c in costs if "noop" in c.label)
    worker_us = engine_us + http_us
    server_us = max(c.server_cpu_us for c in costs)
    wal = max(c.wal_bytes for c in costs)
    print(
        f"\nArithmetic (highest measured: worker {worker_us:.0f} µs = engine {engine_us:.0f} +"
        f" HTTP action {http_us:.0f}; PostgreSQL backends {server_us:.0f} µs; {wal:,.0f} WAL"
        f" bytes per execution; a worker at {WORKER_SHARE:.0%} of a core; {STEADY_COMMITS}"
        f" write transactions per execution in a steady stream; history"
        f" {per_row['job_history']:.0f} B per row with its indexes, {RETENTION_DAYS} days):\n"
    )
    print(
        "| executions/s | worker cores | PostgreSQL backend cores | WAL MB/s | commits/s"
        f" | history rows/day | history GB/day | history TB, {RETENTION_DAYS} days |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rate in (1_000, 10_000, 100_000):
        history_day = rate * 86_400
        gb_day = history_day * per_row["job_history"] / 1e9
        print(
            f"| {rate:,} | {rate * worker_us / 1e6 / WORKER_SHARE:,.1f}"
            f" | {rate * server_us / 1e6:,.1f} | {rate * wal / 1e6:,.0f}"
            f" | {rate * STEADY_COMMITS:,.0f} | {history_day / 1e6:,.0f} M | {gb_day:,.0f}"
            f" | {gb_day * RETENTION_DAYS / 1000:,.1f} |"
        )


async def part_cost(args: argparse.Namespace) -> None:
    print(f"## cost ({args.jobs:,} one-time and {args.jobs:,} recurring jobs per run)\n")
    costs: list[Cost] = []
    sizes: dict[str, int] = {}
    with sink() as url:
        for action in ("noop", "http"):
            async with fresh_database(args.postgres) as db_url:
                costs += await measure_cost(db_url, action, url, args.jobs)
                if action == "noop":
                    sizes = await table_sizes(db_url)
    print_costs(costs)
    per_row = print_sizes(sizes)
    http_us = max(
        c.worker_cpu_us - n.worker_cpu_us for c, n in zip(costs[2:], costs[:2], strict=True)
    )
    print_arithmetic(costs, per_row, http_us)
    print()


# -- several workers ---------------------------------------------------------------------------


@dataclass
class Burst:
    workers: int
    jobs: int
    delivered: int
    seconds: float
    duplicates: int
    lost: int
    worker_cpu_us: float
    server_cpu_us: float
    wal_bytes: float
    load: float


# What a worker or serve says when it starts as expected (the benchmark's serve runs without
# authentication on 127.0.0.1); anything else it said is shown after its run.
STARTUP_LINES = (
    "Horarium worker running (",
    "Horarium listening on ",
    "Warning: authentication is OFF",
    "horarium: created the secret key",
)


async def run_burst(server_url: str | None, workers: int, n: int, sink_url: str) -> Burst:
    """`workers` `horarium worker` processes on a fresh PostgreSQL database of `server_url`, or
    (None) one `horarium serve` on a SQLite file, run a burst of `n` jobs against the sink."""
    sink_reset(sink_url)
    if server_url is None:
        with tempfile.TemporaryDirectory() as tmp:
            return await _burst(f"sqlite:///{tmp}/store.sqlite3", None, 1, n, sink_url)
    async with fresh_database(server_url) as url:
        server = Server(url)
        await server.open()
        try:
            return await _burst(url, server, workers, n, sink_url)
        finally:
            await server.close()


async def _burst(url: str, server: Server | None, workers: int, n: int, sink_url: str) -> Burst:
    """The burst on `url`: PostgreSQL (`server` measures it) with `workers` workers, or SQLite
    (no `server`) with one `serve` (its engine in the process, as a SQLite deployment runs)."""
    from sqlalchemy import select

    from horarium.store.core.db import create_engine, migrate
    from horarium.store.core.schema import jobs

    key = base64.b64encode(os.urandom(32)).decode()
    db = create_engine(url)
    await migrate(db)
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for w in range(workers):
                data = Path(tmp) / f"w{w}"
                log = Path(tmp) / f"w{w}.log"
                if server is None:
                    port = free_port()
                    serve = {"port": port, "auth": "none", "access_log": "false"}
                    procs.append(start_horarium("serve", url, data, log, **serve))
                else:
                    procs.append(start_horarium("worker", url, data, log, secret_key=key))
            # Up: each worker holds its connections to the database; serve answers.
            if server is None:
                wait_port(port, 60)
            deadline = time.monotonic() + 60
            while server and len(await server.backends()) < workers:
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
            await asyncio.sleep(2)
            due = datetime.now(UTC) + timedelta(seconds=2 + n / 10_000)
            await store_burst(db, n, sink_url, due)
            start = await server.mark() if server else None
            c0 = {p.pid: cpu_ticks(p.pid) for p in procs}
            deadline = time.monotonic() + 120 + n / 50
            while time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                if await completed_count(db) >= n:
                    break
            cpu = sum(cpu_ticks(p.pid) - c0[p.pid] for p in procs) / TICKS
            use = await server.since(start) if server and start else None
            await asyncio.sleep(1)  # a duplicate would arrive late
            seen = sink_seen(sink_url)
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                p.wait(30)
            for w in range(workers):
                said = (Path(tmp) / f"w{w}.log").read_text(errors="replace").splitlines()
                text = "\n".join(line for line in said if not line.startswith(STARTUP_LINES))
                if text.strip():
                    print(f"worker {w} said:\n{text[-2000:]}", file=sys.stderr)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    async with db.connect() as conn:
        done = select(jobs.c.name).where(jobs.c.state == "Completed", jobs.c.execution_count == 1)
        completed = (await conn.execute(done)).scalars().all()
    await db.dispose()
    tags = Counter(tag for tag, _, _, _ in seen)
    paths = Counter(path.lstrip("/") for _, path, _, _ in seen)
    last = max((arrived for _, _, arrived, _ in seen), default=0)
    names = {f"job{i}" for i in range(n)}
    lost = len({name for name in names if paths[name] == 0} | (names - set(completed)))
    duplicates = sum(c - 1 for c in tags.values() if c > 1)
    duplicates = max(duplicates, sum(c - 1 for c in paths.values() if c > 1))
    delivered = sum(paths.values())
    return Burst(
        workers=workers,
        jobs=n,
        delivered=delivered,
        seconds=last - due.timestamp(),
        duplicates=duplicates,
        lost=lost,
        worker_cpu_us=cpu / max(1, delivered) * 1e6,
        server_cpu_us=use.cpu_s / max(1, delivered) * 1e6 if use else float("nan"),
        wal_bytes=use.wal_bytes / max(1, delivered) if use else float("nan"),
        load=load1(),
    )


async def part_workers(args: argparse.Namespace) -> None:
    counts = [int(w) for w in args.workers.split(",")]
    print(f"## workers ({args.burst:,} one-time jobs due at one instant, HTTP POST to a sink)\n")
    print(
        "| store | processes | jobs | delivered | seconds | executions/s | ÷ SQLite serve"
        " | duplicates | lost | processes' CPU µs | PostgreSQL CPU µs | WAL bytes | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with sink() as url:
        runs = [("SQLite, one serve", None, 1)]
        runs += [
            (f"PostgreSQL, {w} worker{'s' if w > 1 else ''}", args.postgres, w) for w in counts
        ]
        sqlite_rate = float("nan")
        rates: dict[int, float] = {}
        for label, server_url, workers in runs:
            b = await run_burst(server_url, workers, args.burst, url)
            rate = b.delivered / b.seconds
            if server_url is None:
                sqlite_rate = rate
            else:
                rates[workers] = rate
            print(
                f"| {label} | {b.workers} | {b.jobs:,} | {b.delivered:,} | {b.seconds:.2f}"
                f" | {rate:,.0f} | {rate / sqlite_rate:.2f} | {b.duplicates} | {b.lost}"
                f" | {b.worker_cpu_us:.0f} | {b.server_cpu_us:.0f} | {b.wal_bytes:,.0f}"
                f" | {b.load:.1f} |",
                flush=True,
            )
    print()
    if 1 in rates:
        record_figures(
            "cluster workers",
            [
                ("SQLite serve burst: executions/s", f"{sqlite_rate:,.0f}"),
                *(
                    (f"PostgreSQL, {w} worker(s): executions/s (÷ SQLite)",
                     f"{r:,.0f} ({r / sqlite_rate:.2f})")
                    for w, r in sorted(rates.items())
                ),
            ],
        )  # fmt: skip


# -- a million stored jobs -----------------------------------------------------------------------

# Nothing is due for a day after the store is filled: job g starts at BASE + g % 10,080 minutes
# (one minute of the week) and repeats hourly, daily or weekly (g % 10: 0-6, 7-8, 9).
_MINUTES_A_WEEK = 7 * 24 * 60


def million_sql(dialect: str, stored: int, base: datetime) -> list[str]:
    """The statements that fill an empty store with `stored` jobs in collections of 1,000."""
    collections = (stored + JOBS_PER_COLLECTION - 1) // JOBS_PER_COLLECTION
    stamp = base.strftime("%Y-%m-%d %H:%M:%S")
    action = json.dumps(http_action("http://127.0.0.1:9/never"))
    if dialect == "postgresql":
        at = "timestamptz '" + stamp + "+00'"
        start = f"{at} + (g % {_MINUTES_A_WEEK}) * interval '1 minute'"
        when = f"to_char(({start}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"+00:00\"')"
        recurrence = (
            'CASE WHEN g % 10 < 7 THEN \'{"frequency": "Hour", "interval": 1}\'::json'
            ' WHEN g % 10 < 9 THEN \'{"frequency": "Day", "interval": 1}\'::json'
            ' ELSE \'{"frequency": "Week", "interval": 1}\'::json END'
        )
        return [
            "INSERT INTO job_collections (key, subscription_id, resource_group, name, location,"
            " state, sku, document, created_at, updated_at)"
            " SELECT 'bench' || (c / 100) || '/rg/c' || c, 'bench' || (c / 100), 'rg', 'c' || c,"
            f" 'West US', 'Enabled', 'P20Premium', '{{}}'::json, {at}, {at}"
            f" FROM generate_series(0, {collections - 1}) c",
            "INSERT INTO jobs (collection_id, key, name, definition, state, schedule_set_at,"
            " created_at, updated_at, next_execution_at)"
            f" SELECT (SELECT min(id) FROM job_collections) + g / {JOBS_PER_COLLECTION},"
            " 'job' || g, 'job' || g,"
            f" json_build_object('startTime', {when}, 'action', '{action}'::json,"
            f" 'recurrence', {recurrence}), 'Enabled', {at}, {at}, {at}, {start}"
            f" FROM generate_series(0, {stored - 1}) g",
        ]
    at = f"'{stamp}.000000'"
    start = (
        f"strftime('%Y-%m-%d %H:%M:%S', '{stamp}', '+' || (g % {_MINUTES_A_WEEK}) || ' minutes')"
    )
    recurrence = (
        "CASE WHEN g % 10 < 7 THEN json_object('frequency', 'Hour', 'interval', 1)"
        " WHEN g % 10 < 9 THEN json_object('frequency', 'Day', 'interval', 1)"
        " ELSE json_object('frequency', 'Week', 'interval', 1) END"
    )
    return [
        "WITH RECURSIVE s(c) AS (SELECT 0 UNION ALL SELECT c + 1 FROM s"
        f" WHERE c < {collections - 1})"
        " INSERT INTO job_collections (key, subscription_id, resource_group, name, location,"
        " state, sku, document, created_at, updated_at)"
        " SELECT 'bench' || (c / 100) || '/rg/c' || c, 'bench' || (c / 100), 'rg', 'c' || c,"
        f" 'West US', 'Enabled', 'P20Premium', '{{}}', {at}, {at} FROM s",
        f"WITH RECURSIVE s(g) AS (SELECT 0 UNION ALL SELECT g + 1 FROM s WHERE g < {stored - 1})"
        " INSERT INTO jobs (collection_id, key, name, definition, state, schedule_set_at,"
        " created_at, updated_at, next_execution_at)"
        f" SELECT (SELECT min(id) FROM job_collections) + g / {JOBS_PER_COLLECTION},"
        " 'job' || g, 'job' || g,"
        f" json_object('startTime', replace({start}, ' ', 'T') || '+00:00',"
        f" 'action', json('{action}'), 'recurrence', {recurrence}),"
        f" 'Enabled', {at}, {at}, {at}, {start} || '.000000' FROM s",
    ]


@dataclass
class Million:
    database: str
    stored: int
    fill_s: float
    startup_s: float  # the first start: it reads every job once (store.core.resealing)
    restart_s: float  # the store now marked sealed: no job read
    rss_mb: float
    latencies: dict[str, list[float]]
    due_ms: float
    idle_ms: float
    plan: str
    bytes_per_job: float
    load: float


async def fill(url: str, stored: int, base: datetime) -> float:
    from horarium.store.core.db import create_engine, migrate

    db = create_engine(url)
    await migrate(db)
    t0 = time.perf_counter()
    async with db.begin() as conn:
        for statement in million_sql(db.dialect.name, stored, base):
            await conn.exec_driver_sql(statement)
    seconds = time.perf_counter() - t0
    if db.dialect.name == "postgresql":
        await vacuum(db, "jobs, job_collections")
    await db.dispose()
    return seconds


def api_latencies(base_url: str, token: str, stored: int, requests: int) -> dict[str, list[float]]:
    """`requests` each of GET job, PUT job (an existing one, its action changed), list jobs."""
    import random

    import httpx

    rnd = random.Random(7)
    out: dict[str, list[float]] = {"GET job": [], "PUT job": [], "list jobs": []}

    def collection_of(g: int) -> str:
        c = g // JOBS_PER_COLLECTION
        return (
            f"/subscriptions/bench{c // 100}/resourceGroups/rg/providers/Microsoft.Scheduler"
            f"/jobCollections/c{c}"
        )

    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as http:
        for i in range(requests):
            g = rnd.randrange(stored)
            path = f"{collection_of(g)}/jobs/job{g}"
            t0 = time.perf_counter()
            got = http.get(path, params=API)
            out["GET job"].append(time.perf_counter() - t0)
            assert got.status_code == 200, got.text
            body = {"properties": got.json()["properties"]}
            body["properties"]["action"]["request"]["uri"] = f"http://127.0.0.1:9/put{i}"
            for key in ("state", "status"):
                body["properties"].pop(key, None)
            t0 = time.perf_counter()
            put = http.put(path, params=API, json=body)
            out["PUT job"].append(time.perf_counter() - t0)
            assert put.status_code == 200, put.text
            t0 = time.perf_counter()
            listed = http.get(f"{collection_of(rnd.randrange(stored))}/jobs", params=API)
            out["list jobs"].append(time.perf_counter() - t0)
            assert listed.status_code == 200 and listed.json()["value"], listed.text
    return out


async def due_query(url: str, base: datetime, stored: int) -> tuple[float, float, str]:
    """The claim's SELECT: median ms with more than a batch due (the clock late enough after
    `base` for 200 jobs) and with nothing due (the clock before `base`), and its plan with a
    batch due. Rolled back: it locks."""
    from sqlalchemy import text
    from sqlalchemy.dialects import postgresql, sqlite

    from horarium.store.core.db import create_engine
    from horarium.store.runs.statements import Statements as Sql
    from horarium.store.runs.store import dialect_of

    db = create_engine(url)
    statement = Sql(dialect_of(db)).due_jobs
    times: dict[datetime, float] = {}
    plan = ""
    async with db.connect() as conn:
        later = timedelta(minutes=_MINUTES_A_WEEK * 200 // stored + 2)
        for now in (base + later, base - timedelta(minutes=1)):
            params = {"horizon": now, "now": now, "limit": 200, "full": []}  # no collection full
            runs = []
            for _ in range(21):
                t0 = time.perf_counter()
                async with conn.begin() as tx:
                    rows = (await conn.execute(statement, params)).all()
                    await tx.rollback()
                runs.append(time.perf_counter() - t0)
            times[now] = statistics.median(runs) * 1e3
            if now > base:
                assert len(rows) == 200, len(rows)
                family = postgresql if db.dialect.name == "postgresql" else sqlite
                named = family.dialect(paramstyle="named")  # type: ignore[attr-defined]
                compiled = statement.compile(dialect=named)
                # No collection is full: an id none has stands for the empty list.
                sql = str(compiled).replace("__[POSTCOMPILE_full]", "-1")
                if db.dialect.name == "postgresql":
                    # text() reads `:name::TYPE` as two parameters: the casts go.
                    bare = re.sub(
                        r"(:\w+)::(?:TIMESTAMP WITH TIME ZONE|VARCHAR|INTEGER)\b",
                        r"\1",
                        sql,
                    )
                    explain = f"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) {bare}"
                    bound = dict(compiled.params) | params
                    bound.pop("full", None)
                else:
                    explain = f"EXPLAIN QUERY PLAN {sql}"
                    stamp = now.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
                    bound = dict(compiled.params) | params | {"horizon": stamp, "now": stamp}
                    bound.pop("full", None)
                async with conn.begin() as tx:
                    lines = (await conn.execute(text(explain), bound)).all()
                    await tx.rollback()
                plan = "\n".join(
                    str(r[0]) if db.dialect.name == "postgresql" else f"{'  ' * (r[1] > 0)}{r[3]}"
                    for r in lines
                )
    await db.dispose()
    ordered = sorted(times)
    return times[ordered[1]], times[ordered[0]], plan


async def store_bytes(url: str, stored: int) -> float:
    if url.startswith("postgresql"):
        server = Server(url)
        await server.open()
        try:
            size = await server.conn.fetchval("SELECT pg_total_relation_size('jobs')")
        finally:
            await server.close()
        return float(size) / stored
    path = Path(url.removeprefix("sqlite:///"))
    return (await asyncio.to_thread(path.stat)).st_size / stored


async def run_million(url: str, label: str, stored: int, requests: int) -> Million:
    base = (datetime.now(UTC) + timedelta(days=1)).replace(second=0, microsecond=0)
    fill_s = await fill(url, stored, base)
    with tempfile.TemporaryDirectory() as tmp:
        data, log = Path(tmp) / "data", Path(tmp) / "serve.log"
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        proc, startup = await start_healthy(url, data, port, log)
        try:
            token = (data / "admin-token").read_text().strip()
            latencies = await asyncio.to_thread(api_latencies, base_url, token, stored, requests)
            rss = rss_mb(proc.pid)
        finally:
            stop(proc)
        proc, restart = await start_healthy(url, data, port, log)
        stop(proc)
    due_ms, idle_ms, plan = await due_query(url, base, stored)
    return Million(
        database=label,
        stored=stored,
        fill_s=fill_s,
        startup_s=startup,
        restart_s=restart,
        rss_mb=rss,
        latencies=latencies,
        due_ms=due_ms,
        idle_ms=idle_ms,
        plan=plan,
        bytes_per_job=await store_bytes(url, stored),
        load=load1(),
    )


async def start_healthy(
    url: str, data: Path, port: int, log: Path
) -> tuple[subprocess.Popen[bytes], float]:
    """`serve` started on the store, and the seconds until its /healthz answered 200."""
    import httpx

    t0 = time.perf_counter()
    proc = start_horarium("serve", url, data, log, port=port)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(await asyncio.to_thread(log.read_text))
        try:
            probe = await asyncio.to_thread(
                httpx.get, f"http://127.0.0.1:{port}/healthz", timeout=2
            )
            if probe.status_code == 200:
                return proc, time.perf_counter() - t0
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.05)
    stop(proc)
    raise TimeoutError(f"serve not healthy after 600 s: {await asyncio.to_thread(log.read_text)}")


async def part_million(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.stored.split(",")]
    print(
        f"## million (stored jobs: {', '.join(f'{s:,}' for s in sizes)}; {args.requests} API"
        " requests of each kind; serve with its engine, nothing due)\n"
    )
    results: list[Million] = []
    databases = args.databases.split(",")
    for stored in sizes:
        for kind in ("sqlite", "postgres"):
            if kind in databases:
                async with fresh_store(kind, args.postgres) as url:
                    results.append(await run_million(url, LABELS[kind], stored, args.requests))
    print(
        "| database | stored jobs | fill s | first start s (to /healthz) | restart s | RSS MB"
        " | GET job p50/p99 ms | PUT job p50/p99 ms | list jobs p50/p99 ms"
        " | due query ms (200 due / none) | store bytes per job | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in results:
        lat = " | ".join(
            f"{percentile(v, 0.5) * 1e3:.1f} / {percentile(v, 0.99) * 1e3:.1f}"
            for v in m.latencies.values()
        )
        print(
            f"| {m.database} | {m.stored:,} | {m.fill_s:.0f} | {m.startup_s:.1f}"
            f" | {m.restart_s:.1f} | {m.rss_mb:.0f}"
            f" | {lat} | {m.due_ms:.2f} / {m.idle_ms:.2f} | {m.bytes_per_job:,.0f} | {m.load:.1f} |"
        )
    for m in results:
        if m.stored == max(sizes):
            print(f"\nThe due query's plan, {m.database}, {m.stored:,} stored, 200 due:\n")
            print("```\n" + m.plan + "\n```")
    print()


# -- retention: one day of history out of 10 M rows, a plain table against daily partitions -----

RETENTION_DAYS = 60
_PAGE_SQL = (
    "SELECT id, action_name, status, retry_count, repeat_count, expected_execution_time,"
    " start_time, end_time, message FROM job_history WHERE job_id = $1{status}"
    " ORDER BY id DESC LIMIT 100 OFFSET $2"
)


async def wal_flushed(conn: Any) -> None:
    """Wait until the WAL written so far is flushed: pg_walinspect reads only flushed WAL, and
    the last records of a span (a VACUUM's, or any under `synchronous_commit = off`) may not be
    yet (the WAL writer flushes them within `wal_writer_delay`)."""
    end = await conn.fetchval("SELECT pg_current_wal_insert_lsn()")
    for _ in range(200):
        if await conn.fetchval("SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn", end):
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("the WAL was not flushed in 10 s")


@dataclass
class RetentionPass:
    form: str
    rows: int
    fill_s: float
    removed: int
    wall_s: float
    use: ServerUse
    vacuum_s: float
    vacuum: ServerUse
    page_ms: dict[str, float]  # median ms of a job's history page, by kind
    page_buffers: dict[str, int]  # shared buffers the page read touches (EXPLAIN BUFFERS)
    load: float
    migrate_s: float | None = None  # the plain table's migration to partitions
    migrate: ServerUse | None = None


def history_sql(rows: int, jobs: int, start: datetime, days: int) -> str:
    """`rows` history entries of `jobs` jobs, ending evenly over `days` days from `start`, ids
    in time order (as the engine writes them); one in ten Failed."""
    at = f"timestamptz '{start:%Y-%m-%d %H:%M:%S}+00'"
    ended = f"{at} + (g::float8 / {rows}) * interval '{days} days'"
    return (
        "INSERT INTO job_history (job_id, action_name, status, retry_count, repeat_count,"
        " expected_execution_time, start_time, end_time, message)"
        f" SELECT (SELECT min(id) FROM jobs) + g % {jobs}, 'MainAction',"
        " CASE WHEN g % 10 = 0 THEN 'Failed' ELSE 'Completed' END, 0, g / " + str(jobs) + ","
        f" {ended}, {ended}, {ended},"
        " 'Http Action - Response from host ''127.0.0.1'': ''OK'' Response Headers: Date'"
        " FROM generate_series($1::bigint, $2::bigint) g"
    )


async def dashboard_read(db: Any, reads: int) -> tuple[float, int]:
    """The dashboard's jobs list (`…/outcomes`: a collection's 1,000 jobs, each with its
    newest 10 entries, `store.resources.history.latest_per_job`): the median ms of `reads`
    reads of random collections, and the shared buffers of one."""
    import random

    from sqlalchemy import event, func, select

    from horarium.store.core.schema import job_collections
    from horarium.store.resources import history

    rnd = random.Random(9)
    async with db.connect() as conn:
        ids = (await conn.execute(select(job_collections.c.id))).scalars().all()
        first = (await conn.execute(select(func.min(job_collections.c.id)))).scalar()
        times = []
        for _ in range(max(1, reads // 10)):
            t = time.perf_counter()
            await history.latest_per_job(conn, rnd.choice(ids), 10)
            times.append(time.perf_counter() - t)
        seen: list[tuple[str, Any]] = []

        def record(_c: Any, _cur: Any, sql: str, params: Any, *_rest: Any) -> None:
            seen.append((sql, params))

        event.listen(db.sync_engine, "before_cursor_execute", record)
        try:
            await history.latest_per_job(conn, first, 10)
        finally:
            event.remove(db.sync_engine, "before_cursor_execute", record)
        sql, params = next(x for x in seen if "job_history" in x[0])
        plan = await conn.exec_driver_sql(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
        found = plan.scalar()
    top = (json.loads(found) if isinstance(found, str) else found)[0]["Plan"]
    return statistics.median(times) * 1e3, top["Shared Hit Blocks"] + top["Shared Read Blocks"]


async def run_retention(
    server_url: str, partitioned: bool, rows: int, jobs: int, reads: int
) -> RetentionPass:
    """Fill a store (at migration 0012, or at the head) with `rows` entries over 61 days, then
    time one retention pass that removes the oldest day, and a job's history page."""
    import random

    import asyncpg
    from alembic import command

    from horarium.store.core.db import alembic_config, create_engine, migrate
    from horarium.store.runs.partitions import drop_partitions_before, prepare_partitions
    from horarium.store.runs.retention import delete_aged_history

    now = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    cutoff = now - timedelta(days=RETENTION_DAYS)
    start = cutoff - timedelta(days=1)
    async with fresh_database(server_url) as url:
        db = create_engine(url)
        if partitioned:
            await migrate(db)
            for day in range(RETENTION_DAYS + 2):
                await prepare_partitions(db, start + timedelta(days=day))
        else:
            async with db.begin() as conn:
                await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0012"))
        async with db.begin() as conn:
            for statement in million_sql("postgresql", jobs, now):
                await conn.exec_driver_sql(statement)
        raw = await asyncpg.connect(url)
        t0 = time.perf_counter()
        step = 1_000_000
        for low in range(0, rows, step):
            await raw.execute(
                history_sql(rows, jobs, start, RETENTION_DAYS + 1), low, min(low + step, rows) - 1
            )
        fill_s = time.perf_counter() - t0
        await vacuum(db, "jobs, job_collections, job_history")
        removed = await raw.fetchval("SELECT count(*) FROM job_history WHERE end_time < $1", cutoff)

        rnd = random.Random(5)
        first_job = await raw.fetchval("SELECT min(id) FROM jobs")
        page_ms: dict[str, float] = {}
        page_buffers: dict[str, int] = {}
        kinds = {"newest 100": ("", 0), "$skip=900": ("", 900), "Failed": (" AND status = $3", 0)}
        for kind, (status, skip) in kinds.items():
            sql = _PAGE_SQL.format(status=status)
            extra = ("Failed",) if status else ()
            times = []
            for _ in range(reads):
                job = first_job + rnd.randrange(jobs)
                t = time.perf_counter()
                await raw.fetch(sql, job, skip, *extra)
                times.append(time.perf_counter() - t)
            page_ms[kind] = statistics.median(times) * 1e3
            plan = await raw.fetch(
                f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", first_job, skip, *extra
            )
            found = json.loads(plan[0][0])[0]["Plan"]
            page_buffers[kind] = found["Shared Hit Blocks"] + found["Shared Read Blocks"]

        ms, buffers = await dashboard_read(db, reads)
        page_ms["dashboard, 1,000 jobs × 10"] = ms
        page_buffers["dashboard, 1,000 jobs × 10"] = buffers

        server = Server(url)
        await server.open()
        async with db.connect() as conn:  # the pool's connection, its backend measured
            await conn.exec_driver_sql("SELECT 1")
        await raw.execute("CHECKPOINT")
        mark = await server.mark()
        t0 = time.perf_counter()
        await drop_partitions_before(db, cutoff)
        await delete_aged_history(db, cutoff)
        wall_s = time.perf_counter() - t0
        await wal_flushed(raw)
        use = await server.since(mark)
        left = await raw.fetchval("SELECT count(*) FROM job_history WHERE end_time < $1", cutoff)
        assert left == 0, left

        mark = await server.mark()
        t0 = time.perf_counter()
        await raw.execute("VACUUM job_history")
        vacuum_s = time.perf_counter() - t0
        await wal_flushed(raw)
        vacuum_use = await server.since(mark)

        result = RetentionPass(
            form="daily partitions (0014)" if partitioned else "one table (0012)",
            rows=rows,
            fill_s=fill_s,
            removed=removed,
            wall_s=wall_s,
            use=use,
            vacuum_s=vacuum_s,
            vacuum=vacuum_use,
            page_ms=page_ms,
            page_buffers=page_buffers,
            load=load1(),
        )
        if not partitioned:  # the existing table becomes a partition: its cost at this size
            mark = await server.mark()
            t0 = time.perf_counter()
            await migrate(db)
            result.migrate_s = time.perf_counter() - t0
            await wal_flushed(raw)
            result.migrate = await server.since(mark)
        await server.close()
        await raw.close()
        await db.dispose()
    return result


async def part_retention(args: argparse.Namespace) -> None:
    rows, jobs = args.history_rows, args.history_jobs
    print(
        f"## retention ({rows:,} history entries of {jobs:,} jobs over 61 days, PostgreSQL;"
        " one pass removes the oldest day)\n",
        flush=True,
    )
    results = [
        await run_retention(args.postgres, partitioned, rows, jobs, args.requests)
        for partitioned in (False, True)
    ]
    print(
        "| form | fill s | entries removed | pass s | WAL KB (FPI KB) | server CPU s"
        " | VACUUM after: s, WAL KB | load |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r.form} | {r.fill_s:.0f} | {r.removed:,} | {r.wall_s:.2f}"
            f" | {r.use.wal_bytes / 1e3:,.1f} ({r.use.fpi_bytes / 1e3:,.1f}) | {r.use.cpu_s:.2f}"
            f" | {r.vacuum_s:.1f}, {r.vacuum.wal_bytes / 1e3:,.1f} | {r.load:.1f} |"
        )
    print("\nWAL records of the pass:\n")
    for r in results:
        top = ", ".join(f"{k} {v:,}" for k, v in r.use.records.most_common(6))
        print(f"- {r.form}: {top}")
    kinds = list(results[0].page_ms)
    print(
        f"\nA job's history page ($top=100; median of {args.requests} reads of random jobs, ms;"
        " shared buffers of one read):\n"
    )
    print("| form | " + " | ".join(kinds) + " |")
    print("|---|" + "---:|" * len(kinds))
    for r in results:
        cells = " | ".join(f"{r.page_ms[k]:.2f} ms, {r.page_buffers[k]} buffers" for k in kinds)
        print(f"| {r.form} | {cells} |")
    for r in results:
        if r.migrate is not None and r.migrate_s is not None:
            print(
                f"\nMigration 0014 of the one table ({r.rows - r.removed:,} entries):"
                f" {r.migrate_s:.1f} s, WAL {r.migrate.wal_bytes / 1e3:,.1f} KB,"
                f" server CPU {r.migrate.cpu_s:.1f} s"
            )
    print()


# -- main ----------------------------------------------------------------------------------------


async def main(args: argparse.Namespace) -> None:
    parts = args.part.split(",")
    print(f"Load average at start: {load()}; {os.cpu_count()} cores\n", flush=True)
    if "cost" in parts:
        await part_cost(args)
    if "workers" in parts:
        await part_workers(args)
    if "million" in parts:
        await part_million(args)
    if "retention" in parts:
        await part_retention(args)
    print(f"Load average at end: {load()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="cost,workers,million", help="comma-separated parts")
    parser.add_argument(
        "--postgres", default=PG_DEFAULT, help="server URL to create databases from"
    )
    parser.add_argument("--jobs", type=int, default=5000, help="cost: jobs of each kind")
    parser.add_argument("--burst", type=int, default=3000, help="workers: jobs due at once")
    parser.add_argument("--workers", default="1,2,3", help="workers: process counts")
    parser.add_argument("--stored", default="10000,1000000", help="million: stored jobs")
    parser.add_argument("--requests", type=int, default=300, help="million: requests per kind")
    parser.add_argument(
        "--databases", default="sqlite,postgres", help="million: sqlite, postgres or both"
    )
    parser.add_argument(
        "--history-rows", type=int, default=10_000_000, help="retention: history entries"
    )
    parser.add_argument(
        "--history-jobs", type=int, default=10_000, help="retention: jobs they belong to"
    )
    run(main(parser.parse_args()))
