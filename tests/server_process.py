"""A real `horarium serve` process for tests: started on a free port with its own data folder,
waited for until it answers, stopped (SIGTERM, then SIGKILL) at the end.

    with running_server(tmp_path) as server:            # SQLite in tmp_path, no scheduler
        httpx.get(server.url("/subscriptions/…"), params={"api-version": "2016-03-01"})

    with running_server(tmp_path, database=pg_url, engine=True, env={...}, args=[...]) as s:
        ...

`server.restart()` stops the process and starts it again on the same port and data.

`ca_file`: the server speaks https (the caller passes --ssl-certfile / --ssl-keyfile in `args`)
with a certificate this CA signed; `server.verify` is what clients verify it with.

`server.token` is the admin token the server wrote on its first start (`data/admin-token`), or
None when there is none; `server.auth_headers()` is the Authorization header that sends it.
Every test request that is not about authentication itself goes with it.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests import forkserver
from tests.migrated_databases import migrated_pg_database, place_sqlite_database
from tests.support import free_port

STARTUP_SECONDS = 60.0
PORT_TRIES = 3


class _PortTaken(Exception):
    """The chosen port was taken before the server could bind it."""


def _beyond_loopback() -> str:
    """Every address but loopback, as CIDRs: the outbound deny list of the servers the tests
    start (with the defaults), so that a server's actions, too, can only reach 127.0.0.0/8 and
    ::1 — a test's own `--outbound-deny` replaces it."""
    v4 = ipaddress.ip_network("0.0.0.0/0").address_exclude(ipaddress.ip_network("127.0.0.0/8"))
    v6 = ipaddress.ip_network("::/0").address_exclude(ipaddress.ip_network("::1/128"))
    return ",".join(["link-local", "metadata", *map(str, v4), *map(str, v6)])


LOOPBACK_ONLY = {"HORARIUM_OUTBOUND_DENY": _beyond_loopback()}


class ServerProcess:
    def __init__(
        self,
        workdir: Path,
        *,
        database: str | None,
        engine: bool,
        env: Mapping[str, str] | None,
        args: Sequence[str],
        ca_file: Path | None = None,
    ) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.database = database
        self.engine = engine
        self.extra_env = dict(env or {})
        self.extra_args = list(args)
        self.port = free_port()
        self.ca_file = ca_file
        self.verify: ssl.SSLContext | bool = (
            ssl.create_default_context(cafile=ca_file) if ca_file is not None else True
        )
        self.scheme = "https" if ca_file is not None else "http"
        self.base_url = f"{self.scheme}://127.0.0.1:{self.port}"
        self.log_path = workdir / "server.log"
        self.process: forkserver.AnyProcess | None = None
        self.token: str | None = None

    def url(self, path: str) -> str:
        return self.base_url + path

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def command(self) -> list[str]:
        cmd = [
            sys.executable,
            "-m",
            "horarium.cli",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            "--engine" if self.engine else "--no-engine",
        ]
        if self.database:
            cmd += ["--database", self.database]
        return cmd + self.extra_args

    def start(self) -> None:
        """Start the process and wait until it answers. The port was free when it was chosen;
        when another process (another xdist worker's server) took it in the meantime, this
        one exits saying so, and it is started again on another port."""
        for _ in range(PORT_TRIES):
            try:
                self._start_once()
                return
            except _PortTaken:
                self.port = free_port()
                self.base_url = f"{self.scheme}://127.0.0.1:{self.port}"
        raise RuntimeError(f"no free port for horarium serve after {PORT_TRIES} tries")

    def _announced(self) -> bool:
        """Whether this process said it listens on its port: until then, what answers on the
        port may be another process's server."""
        mark = f"127.0.0.1:{self.port}"
        return any("listening" in line and mark in line for line in self.log().splitlines())

    def _start_once(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **LOOPBACK_ONLY, **self.extra_env}
        with self.log_path.open("ab") as log:
            self.process = forkserver.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.workdir
            )
        deadline = time.monotonic() + STARTUP_SECONDS
        # One client for every probe: a new one per probe loads the CA bundle each time, which
        # cost the suite more CPU than the servers' own start-ups.
        with httpx.Client(timeout=2, verify=self.verify) as probes:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    if f"--port {self.port}: " in self.log() and "already in use" in self.log():
                        raise _PortTaken
                    raise RuntimeError(f"horarium serve exited early:\n{self.log()}")
                try:
                    answered = probes.get(self.url("/healthz")).status_code == 200
                    if answered and self._announced():
                        self._read_token()
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"horarium serve did not answer in {STARTUP_SECONDS} s:\n{self.log()}")

    def _read_token(self) -> None:
        path = self.data_dir / "admin-token"
        self.token = path.read_text().strip() if path.exists() else None

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)

    def restart(self) -> None:
        self.stop()
        self.start()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_worker(
    database: str, log: Path, args: Sequence[str] = (), secret_key_file: Path | None = None
) -> forkserver.AnyProcess:
    """`horarium worker` on `database`, its data folder beside `log`, its actions allowed only
    to loopback (as the test servers'); its output goes to `log` (appended, so a restarted
    worker adds to it). `secret_key_file`: the API process's key (every process on one
    database needs the same)."""
    command = [sys.executable, "-m", "horarium.cli", "worker", "--database", database]
    command += ["--data-dir", str(log.parent / "worker-data"), *args]
    if secret_key_file is not None:
        command += ["--secret-key-file", str(secret_key_file)]
    with log.open("ab") as out:
        return forkserver.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **LOOPBACK_ONLY},
            cwd=log.parent,
        )


def database_url(server: ServerProcess) -> str:
    """The URL of the database `server` uses (its SQLite file unless it was given one)."""
    return server.database or f"sqlite:///{(server.data_dir / 'horarium.sqlite3').resolve()}"


@contextmanager
def running_server(
    workdir: Path,
    *,
    database: str | None = None,
    engine: bool = False,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    ca_file: Path | None = None,
) -> Iterator[ServerProcess]:
    """`database`: None for the default SQLite file in `workdir/data`; `engine`: also run the
    scheduler (off by default so API tests never call out); `ca_file`: https (see above)."""
    workdir.mkdir(parents=True, exist_ok=True)
    server = ServerProcess(
        workdir, database=database, engine=engine, env=env, args=args, ca_file=ca_file
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


# The databases a server test runs on: `@pytest.fixture(params=DATABASES)` with `serving`.
DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@contextmanager
def serving(
    database: str,
    workdir: Path,
    *,
    engine: bool = False,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
) -> Iterator[ServerProcess]:
    """`running_server` on "sqlite" (a file in `workdir`) or "postgres" (a fresh database),
    either already migrated (`tests.migrated_databases`)."""
    if database == "postgres":
        with (
            migrated_pg_database() as url,
            running_server(workdir, database=url, engine=engine, env=env, args=args) as server,
        ):
            yield server
    else:
        place_sqlite_database(workdir / "data")
        with running_server(workdir, engine=engine, env=env, args=args) as server:
            yield server
