"""Shared test helpers: reaching real local services, free ports, fresh PostgreSQL databases."""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine

PG_ADMIN_URL = os.environ.get("HORARIUM_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() == "true"


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip (with the reason) when a local service is unreachable; under CI=true, fail."""
    if port_open(host, port):
        return
    reason = f"{name} is not reachable on {host}:{port}"
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: it must run)")
    pytest.skip(reason)


def require_tool(name: str, package: str) -> str:
    """The path of the command `name` (Debian's `package`, which scripts/services.sh installs);
    skip (with the reason) when it is missing; under CI=true, fail."""
    found = shutil.which(name)
    if found is not None:
        return found
    reason = f"`{name}` is not installed (Debian's {package} package)"
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: it must run)")
    pytest.skip(reason)


@cache
def _postgres_problem() -> str | None:
    """Why the tests cannot use PG_ADMIN_URL (None: they can): the server is not running, the
    login is refused or the database is missing (scripts/services.sh creates it when it can)."""

    import asyncpg

    if not port_open("127.0.0.1", 5432):
        return "PostgreSQL is not reachable on 127.0.0.1:5432"

    async def login() -> None:
        conn = await asyncpg.connect(PG_ADMIN_URL, timeout=10)
        await conn.close()

    try:
        run_apart(login)
    except Exception as exc:
        shown = PG_ADMIN_URL.split("@")[-1]
        return (
            f"PostgreSQL at {shown} refused the tests: {exc} (run ./scripts/test, which creates"
            " the database, or set HORARIUM_TEST_PG to a URL with trust or a password)"
        )
    return None


def require_postgres() -> None:
    """Skip (with the reason) when the tests cannot use PostgreSQL; under CI=true, fail."""
    problem = _postgres_problem()
    if problem is None:
        return
    if IN_CI:
        pytest.fail(f"{problem} (CI=true: it must be usable)")
    pytest.skip(problem)


# free_port hands out ports below the kernel's ephemeral range, which nothing takes by itself
# (a bind to port 0 and an outgoing connection get ephemeral ports), each test process from a
# slice of its own: a port it returns stays free until the caller's server binds it, whatever the
# other workers, their servers and their clients do meanwhile.
FIRST_PORT = 10_000  # below: the well-known ports of local services (5432, 5672, 6379, …)
# The main process and pytest-xdist workers gw0…gw14 get slices of their own (gw15 shares the
# main process's, which never runs beside the workers).
PORT_SLICES = 16


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


@cache
def _own_ports() -> Iterator[int]:
    """This process's slice of the ports below the ephemeral range, round and round from a
    random place (empty when the range leaves no room)."""
    size = (_ephemeral_start() - FIRST_PORT) // PORT_SLICES
    if size < 100:
        return iter(())
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw-1").removeprefix("gw")
    first = FIRST_PORT + (int(worker) + 1) % PORT_SLICES * size
    start = int.from_bytes(os.urandom(2)) % size
    return itertools.cycle([*range(first + start, first + size), *range(first, first + start)])


def free_port() -> int:
    """A loopback TCP port nothing listens on now, and that no other test process will be
    given (see above); where the kernel leaves no room below its ephemeral range, any free one."""
    ports = _own_ports()
    for _ in range(2_000):
        port = next(ports, None)
        if port is None:
            break
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # a local service's port, or a closed server's connections linger
            return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def admin_execute(sql: str) -> None:
    """Run one statement on the admin database with asyncpg (CREATE/DROP DATABASE)."""

    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(PG_ADMIN_URL)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    run_apart(run)


def admin_fetch(sql: str, *args: Any) -> list[Any]:
    """The rows of one query on the admin database."""

    import asyncpg

    rows: list[Any] = []

    async def run() -> None:
        conn = await asyncpg.connect(PG_ADMIN_URL)
        try:
            rows.extend(await conn.fetch(sql, *args))
        finally:
            await conn.close()

    run_apart(run)
    return rows


def run_apart(work: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """`asyncio.run(work())` on a thread of its own, so that it also works when called from a
    test or fixture that runs in an event loop."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as thread:
        thread.submit(lambda: asyncio.run(work())).result()


def drop_pg_database(url: str) -> None:
    """Drop the database of `url` now, closing its connections (a server using it loses it)."""
    name = url.rsplit("/", 1)[1]
    admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def fresh_pg_database(template: str | None = None) -> Iterator[str]:
    """A new PostgreSQL database for one test (or module), dropped afterwards: empty, or a copy
    of the database `template` (`tests.migrated_databases.postgres_template`)."""
    require_postgres()
    name = f"horarium_{uuid.uuid4().hex[:12]}"
    copied = f' TEMPLATE "{template}"' if template else ""
    admin_execute(f'CREATE DATABASE "{name}"{copied}')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def hour_with_room(room: timedelta = timedelta(minutes=1)) -> datetime:
    """The start of the current hour (UTC), once at least `room` of it is left: a test that
    places executions around "this hour" would otherwise see the next hour's fall due while it
    runs. Waits for the next hour when it is closer than that."""
    now = datetime.now(UTC)
    next_hour = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    if next_hour - now < room:
        time.sleep((next_hour - now).total_seconds() + 0.5)
    return datetime.now(UTC).replace(minute=0, second=0, microsecond=0)


def wait_until(check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll until `check()` is truthy and return its value; the timeout only bounds a hung test
    (it never decides the outcome of a healthy run)."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s")
        time.sleep(0.2)
    return value


# An id list bound as one parameter (`store.runs.id_lists`) is read whole through `json_each`:
# a scan of the list, not of a table.
_ID_LIST_SCAN = "SCAN json_each VIRTUAL TABLE"


def sqlite_table_scans(plan: list[str]) -> list[str]:
    """The lines of a SQLite `EXPLAIN QUERY PLAN` that read a whole table (a SCAN using no
    index; the scan of a bound id list is not one)."""
    return [
        line
        for line in plan
        if line.startswith("SCAN") and "USING" not in line and not line.startswith(_ID_LIST_SCAN)
    ]


# -- the statements a database is sent --------------------------------------------------------

Statement = tuple[str, Any]  # SQL and parameters, as the driver gets them


@contextmanager
def captured(db: AsyncEngine, *more: Engine | None, many: bool = True) -> Iterator[list[Statement]]:
    """The statements (SQL and parameters, as the driver gets them) run on `db` (and the
    blocking engines `more`: a `Transactor`'s on SQLite) meanwhile; those run once per row of
    a list (`executemany`) too unless `many` is False."""
    seen: list[Statement] = []

    def record(_c: Any, _cur: Any, sql: str, params: Any, _ctx: Any, executemany: bool) -> None:
        if many or not executemany:
            seen.append((sql, params))

    engines = [db.sync_engine, *(e for e in more if e is not None)]
    for engine in engines:
        event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for engine in engines:
            event.remove(engine, "before_cursor_execute", record)


async def plan_of(db: AsyncEngine, statement: Statement) -> str:
    """The database's plan of `statement`, one line per step."""
    sql, params = statement
    async with db.connect() as conn:
        if db.dialect.name == "sqlite":
            rows = await conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)
            return "\n".join(str(row[-1]) for row in rows)
        rows = await conn.exec_driver_sql(f"EXPLAIN {sql}", params)
        return "\n".join(str(row[0]) for row in rows)
