"""What the benchmarks share: the machine's load and stolen CPU, a process's CPU and memory,
ports, the HTTP sink, PostgreSQL databases, `horarium` processes, stored jobs, a fixed clock, a
no-op action, and the table of current figures at the top of docs/benchmarks.md (`record_figures`).

A plain module, not a benchmark: the scripts run as files (`.venv/bin/python bench/X.py`), so
this folder is first on `sys.path` and `from support import ...` finds it. Nothing here imports
horarium when the module is imported (`bench/store_forms.py --tree` chooses the checkout whose
horarium is imported, after this module).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

PG_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
TICKS = os.sysconf("SC_CLK_TCK")
JOBS_PER_COLLECTION = 1000  # the P20Premium plan's maximum
LABELS = {"sqlite": "SQLite", "postgres": "PostgreSQL"}  # a store kind's name in the tables


# -- the machine and its processes ---------------------------------------------------------------


def load() -> str:
    """The load average for a table's heading: the 1-minute figure (and the 5-minute one)."""
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (5-min {five:.1f})"


def load1() -> float:
    """The 1-minute load average, for a table's `load` column."""
    return os.getloadavg()[0]


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process (clock ticks, TICKS a second); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _cpu_times() -> tuple[int, int]:
    """The machine's (stolen, total) CPU ticks so far, from /proc/stat's first line."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[7], sum(fields[:8])  # user … steal; guest time is counted in user already


class StolenCpu:
    """The share of the machine's CPU time the hypervisor gave to other guests (`steal`) while
    in the `with` block: over the whole block (`overall`) and in its worst `every`-second
    sample (`worst`), both 0 to 1. A sampling thread reads /proc/stat. A run whose worst sample
    is high was not quiet, whatever its load average says: the guest was not running."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.overall = self.worst = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> StolenCpu:
        self._first = self._last = _cpu_times()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        stolen, total = (now - then for now, then in zip(_cpu_times(), self._first, strict=True))
        self.overall = stolen / total if total else 0.0

    def _sample(self) -> None:
        while not self._done.wait(self.every):
            now = _cpu_times()
            stolen, total = (a - b for a, b in zip(now, self._last, strict=True))
            self._last = now
            if total:
                self.worst = max(self.worst, stolen / total)

    def __str__(self) -> str:
        return f"{self.overall:.1%} (worst {self.every:g} s: {self.worst:.0%})"


def rss_mb(pid: int | str = "self") -> float:
    """The resident memory of a process (this one by default), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The value below which the share `q` of `values` lie (the nearest rank); NaN if none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(main: Coroutine[Any, Any, T], loop: str = "auto") -> T:
    """Run `main` on the event loop `loop` names, as `horarium serve --loop` does."""
    from horarium.loops import loop_factory

    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        return runner.run(main)


# -- the current figures of docs/benchmarks.md --------------------------------------------------

FIGURES_DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
FIGURES_START = "<!-- current figures: each benchmark rewrites its own rows (bench/support.py) -->"
FIGURES_END = "<!-- end of current figures -->"
FIGURES_HEADING = (
    "| benchmark | figure | value | measured (UTC) | load | command |\n"
    "|---|---|---:|---|---:|---|\n"
)


def record_figures(
    benchmark: str, figures: Sequence[tuple[str, str]], doc: Path = FIGURES_DOC
) -> None:
    """Put this run's `figures` ((figure, value) pairs) in docs/benchmarks.md's table of current
    figures, in place of `benchmark`'s rows there, with the time, the load and the command."""
    text = doc.read_text()
    head, start, rest = text.partition(FIGURES_START)
    table, end, tail = rest.partition(FIGURES_END)
    if not start or not end:
        raise RuntimeError(f"{doc} has no table of current figures (its markers are missing)")
    rows = [line for line in table.strip().splitlines()[2:] if line.startswith("|")]
    command = " ".join([".venv/bin/python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    new = [
        f"| {benchmark} | {figure} | {value} | {when} | {load1():.1f} | `{command}` |"
        for figure, value in figures
    ]
    theirs = [i for i, row in enumerate(rows) if _first_cell(row) == benchmark]
    kept = [row for row in rows if _first_cell(row) != benchmark]
    at = theirs[0] if theirs else len(kept)
    kept[at:at] = new
    body = FIGURES_HEADING + "\n".join(kept) + "\n"
    doc.write_text(head + start + "\n" + body + end + tail)
    print(f"(current figures of {benchmark} written to {doc.name})")


def _first_cell(row: str) -> str:
    return row.strip().strip("|").split("|")[0].strip()


def write_section(heading: str, section: str, doc: Path = FIGURES_DOC) -> None:
    """Put `section` in docs/benchmarks.md in place of the section under `heading` (a line
    ``## {heading}``, up to the next ``## `` line), or at its end; the rest is kept."""
    text = doc.read_text()
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.S | re.M)
    body = section.rstrip("\n") + "\n\n"
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + body
    doc.write_text(text.rstrip("\n") + "\n")


# -- ports and the HTTP sink ---------------------------------------------------------------------


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, seconds: float = 30) -> None:
    """Return once something listens on `port` of 127.0.0.1; RuntimeError after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


# argv: port, delay (seconds before each answer), record (1: note each request), backlog.
SINK_SCRIPT = """
import asyncio, json, sys, time
from aiohttp import web
port, delay, backlog = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[4])
record = sys.argv[3] == "1"
seen = []  # [execution tag, path, arrived, answered or None]
async def ok(request):
    await request.read()
    if delay:
        await asyncio.sleep(delay)
    return web.Response(text="ok")
async def hit(request):
    await request.read()
    entry = [request.headers.get("x-ms-execution-tag", ""), request.path, time.time(), None]
    seen.append(entry)
    if delay:
        await asyncio.sleep(delay)
    entry[3] = time.time()
    return web.Response(text="ok")
async def count(request):
    return web.Response(text=str(len(seen)))
async def dump(request):
    return web.Response(text=json.dumps(seen))
async def reset(request):
    seen.clear()
    return web.Response(text="ok")
async def cpu(request):
    return web.Response(text=repr(time.process_time()))
app = web.Application()
app.router.add_get("/__count", count)
app.router.add_get("/__seen", dump)
app.router.add_post("/__reset", reset)
app.router.add_get("/__cpu", cpu)
app.router.add_route("*", "/{tail:.*}", hit if record else ok)
web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None, backlog=backlog)
"""


@contextmanager
def sink(delay: float = 0.0, record: bool = True, backlog: int = 2048) -> Iterator[str]:
    """An HTTP server in another process that answers every request "ok" (after `delay` s);
    with `record`, it notes each request (`sink_seen`). Yields its base URL."""
    # The backlog holds the hundreds of connections the clients open at once (the default, 128,
    # overflows: dropped connection attempts are retried by TCP a second later).
    port = free_port()
    argv = [str(port), str(delay), "1" if record else "0", str(backlog)]
    proc = subprocess.Popen([sys.executable, "-c", SINK_SCRIPT, *argv])
    try:
        wait_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait()


def sink_seen(url: str) -> list[list[Any]]:
    """The requests the sink noted: [execution tag, path, arrived, answered or None] each."""
    import httpx

    return list(httpx.get(f"{url}/__seen", timeout=30).json())


def sink_cpu(url: str) -> float:
    """The sink process's CPU seconds so far (all its threads)."""
    import httpx

    return float(httpx.get(f"{url}/__cpu", timeout=30).text)


def sink_reset(url: str) -> None:
    """The sink forgets the requests it noted."""
    import httpx

    httpx.post(f"{url}/__reset", timeout=30)


# -- stores --------------------------------------------------------------------------------------


async def create_database(server: str) -> str:
    """A new, empty database on the PostgreSQL server of the URL `server`; its URL."""
    import asyncpg

    name = f"horarium_bench_{uuid.uuid4().hex[:10]}"
    conn = await asyncpg.connect(server)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return f"{server.rsplit('/', 1)[0]}/{name}"


async def drop_database(server: str, url: str) -> None:
    """Drop the database of `url` (made by `create_database`), its connections closed."""
    import asyncpg

    conn = await asyncpg.connect(server)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')
    finally:
        await conn.close()


@asynccontextmanager
async def fresh_database(server: str) -> AsyncIterator[str]:
    """A new PostgreSQL database on `server` for the block (its URL), dropped after."""
    url = await create_database(server)
    try:
        yield url
    finally:
        await drop_database(server, url)


@asynccontextmanager
async def fresh_store(kind: str, server: str | None) -> AsyncIterator[str]:
    """The URL of an empty store for the block: a SQLite file ("sqlite") or a fresh database
    on the PostgreSQL server `server` ("postgres"), removed after."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            yield f"sqlite:///{tmp}/store.sqlite3"
    else:
        assert server, "a PostgreSQL store needs a server URL"
        async with fresh_database(server) as url:
            yield url


async def vacuum(db: Any, tables: str = "jobs, job_collections, job_history") -> None:
    """VACUUM ANALYZE `tables` (PostgreSQL), outside a transaction."""
    async with db.connect() as conn:
        auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await auto.exec_driver_sql(f"VACUUM ANALYZE {tables}")


# -- horarium processes --------------------------------------------------------------------------


def start_horarium(
    command: str, database: str, data_dir: Path, log: Path, **settings: object
) -> subprocess.Popen[bytes]:
    """`horarium COMMAND` (serve, worker) in a process of its own on `database`, `settings` as
    HORARIUM_* variables (port=8080: HORARIUM_PORT), its output appended to `log`."""
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "HORARIUM_DATABASE": database,
        "HORARIUM_DATA_DIR": str(data_dir),
        "HORARIUM_LOG_LEVEL": "warning",
    }
    env.update({f"HORARIUM_{name.upper()}": str(value) for name, value in settings.items()})
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "horarium.cli", command],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL if the process has not ended 30 s later."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# -- jobs ----------------------------------------------------------------------------------------


def http_action(url: str) -> dict[str, Any]:
    """An HTTP action that POSTs "tick" to `url`, not retried."""
    return {
        "type": "Http",
        "request": {"uri": url, "method": "POST", "body": "tick"},
        "retryPolicy": {"retryType": "None"},
    }


async def add_collections(conn: Any, names: Iterable[str], now: datetime) -> list[int]:
    """Enabled P20Premium job collections bench/rg/NAME, one a name; their ids."""
    from horarium.model.names import CollectionName
    from horarium.store.resources import collections as collections_store

    return [
        await collections_store.insert_one(
            conn,
            CollectionName("bench", "rg", name),
            location="West US",
            state="Enabled",
            sku="P20Premium",
            document={},
            now=now,
        )
        for name in names
    ]


def job_row(
    collection: int,
    i: int,
    definition: Mapping[str, Any],
    due: datetime,
    now: datetime,
    **more: Any,
) -> dict[str, Any]:
    """The `jobs` row of an enabled job{i}, with the columns the API's
    `store.resources.jobs.insert_one` writes (and `more`), set at `now` and next due at `due`."""
    return {
        "collection_id": collection,
        "key": f"job{i}",
        "name": f"job{i}",
        "definition": definition,
        "state": "Enabled",
        "schedule_set_at": now,
        "created_at": now,
        "updated_at": now,
        "next_execution_at": due,
        **more,
    }


async def insert_jobs(conn: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    """`rows` (`job_row`) into `jobs`, 1,000 rows per statement (setup speed)."""
    from sqlalchemy import insert

    from horarium.store.core.schema import jobs

    for i in range(0, len(rows), 1000):
        await conn.execute(insert(jobs), rows[i : i + 1000])


async def store_burst(db: Any, n: int, url: str, due: datetime) -> None:
    """`n` one-time jobs (job0, job1, ...) due at `due`, each a POST to `url`/jobI, in
    collections of 1,000, stored in one transaction."""
    now = datetime.now(UTC)
    count = (n + JOBS_PER_COLLECTION - 1) // JOBS_PER_COLLECTION
    async with db.begin() as conn:
        collections = await add_collections(conn, [f"c{c}" for c in range(count)], now)
        rows = [
            job_row(
                collections[i // JOBS_PER_COLLECTION],
                i,
                {"startTime": due.isoformat(), "action": http_action(f"{url}/job{i}")},
                due,
                now,
            )
            for i in range(n)
        ]
        await insert_jobs(conn, rows)


async def completed_count(db: Any) -> int:
    """How many jobs are Completed."""
    from sqlalchemy import func, select

    from horarium.store.core.schema import jobs

    async with db.connect() as conn:
        found = await conn.execute(select(func.count()).where(jobs.c.state == "Completed"))
        return int(found.scalar_one())


# -- the engine in this process ------------------------------------------------------------------


class Clock:
    """A clock for the engine that stands at `at` until moved."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def now(self) -> datetime:
        return self.at


class NoAction:
    """An action runner that runs nothing and succeeds."""

    async def __aenter__(self) -> NoAction:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, action: Mapping[str, Any], context: Any) -> Any:
        from horarium.actions.base import ActionResult

        return ActionResult(True, "Http Action - Response from host '127.0.0.1': 'OK'")
