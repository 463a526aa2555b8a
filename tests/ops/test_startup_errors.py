"""A newcomer's start-up mistakes end `horarium serve` and `horarium worker` with one line on
stderr and exit code 2, no traceback: PostgreSQL not reachable, a database that does not exist,
a URL of another kind, a port in use. Ctrl-C stops them with exit code 0, without `Aborted!`."""

from __future__ import annotations

import signal
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.ops.ops_support import horarium, one_line_error
from tests.server_process import running_server, start_worker
from tests.support import free_port, require_postgres, wait_until


@pytest.fixture
def port_in_use() -> Iterator[int]:
    """A port on 127.0.0.1 another program listens on."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield int(taken.getsockname()[1])


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horarium("serve", "--port", str(free_port()), "--data-dir", str(tmp_path), *args)


def test_serve_says_when_postgresql_cannot_be_reached(tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/horarium"
    line = one_line_error(_serve(tmp_path, "--database", url))
    assert "cannot reach PostgreSQL at 127.0.0.1:" in line and "connection refused" in line


@pytest.mark.postgres
def test_serve_says_when_the_database_does_not_exist(tmp_path: Path) -> None:
    require_postgres()
    name = f"horarium_missing_{uuid.uuid4().hex[:8]}"
    url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    line = one_line_error(_serve(tmp_path, "--database", url))
    assert f"has no database '{name}'" in line and "createdb" in line


def test_serve_refuses_a_database_url_of_another_kind(tmp_path: Path) -> None:
    line = one_line_error(_serve(tmp_path, "--database", "mysql://root:secret@127.0.0.1/db"))
    assert "unsupported URL scheme 'mysql'" in line
    assert "secret" not in line


def test_serve_says_when_its_port_is_in_use(tmp_path: Path, port_in_use: int) -> None:
    run = horarium("serve", "--port", str(port_in_use), "--data-dir", str(tmp_path))
    line = one_line_error(run)
    assert f"--port {port_in_use}: 127.0.0.1:{port_in_use} is already in use" in line
    assert not (tmp_path / "horarium.sqlite3").exists()  # nothing was done before the bind
    assert not (tmp_path / "secret.key").exists()


def _worker(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return horarium("worker", "--data-dir", str(tmp_path), *args, cwd=tmp_path)


def test_worker_says_when_postgresql_cannot_be_reached(tmp_path: Path) -> None:
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/horarium"
    line = one_line_error(_worker(tmp_path, "--database", url))
    assert "cannot reach PostgreSQL" in line


def test_worker_refuses_a_database_url_of_another_kind(tmp_path: Path) -> None:
    line = one_line_error(_worker(tmp_path, "--database", "oracle://x@127.0.0.1/y"))
    assert "unsupported URL scheme 'oracle'" in line


def test_worker_says_when_its_metrics_port_is_in_use(tmp_path: Path, port_in_use: int) -> None:
    database = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    run = _worker(tmp_path, "--database", database, "--metrics-port", str(port_in_use))
    assert "--metrics-port" in one_line_error(run)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_serve_after_its_drain_with_exit_code_0(
    tmp_path: Path, stop: signal.Signals
) -> None:
    with running_server(tmp_path, engine=True) as server:
        assert server.process is not None
        server.process.send_signal(stop)
        code = server.process.wait(timeout=30)
        log = server.log()
    assert code == 0, log  # a supervisor counts 143 (SIGTERM's) as a failure
    assert "Aborted!" not in log and "Traceback" not in log


def test_ctrl_c_stops_a_worker_with_exit_code_0(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    worker = start_worker(f"sqlite:///{tmp_path / 'w.sqlite3'}", log)
    try:
        wait_until(lambda: "Horarium worker running" in log.read_text(), "the worker to start")
        worker.send_signal(signal.SIGINT)
        code = worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert code == 0, log.read_text()
    assert "Aborted!" not in log.read_text() and "Traceback" not in log.read_text()


def test_a_second_scheduler_on_one_sqlite_file_is_refused_naming_the_first(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path / "first", engine=True) as server:
        assert server.process is not None
        database = f"sqlite:///{server.data_dir / 'horarium.sqlite3'}"
        key = ["--secret-key-file", str(server.data_dir / "secret.key")]
        line = one_line_error(_worker(tmp_path, "--database", database, *key))
        assert f"has a scheduler already (pid {server.process.pid}, `horarium serve`" in line
        assert "one process may run the scheduler on a SQLite database" in line
        line = one_line_error(_serve(tmp_path / "second", "--database", database, *key))
        assert f"(pid {server.process.pid}, `horarium serve`" in line
        # The API alone beside it is welcome.
        with running_server(tmp_path / "api", database=database, engine=False, args=key) as beside:
            assert httpx.get(beside.url("/healthz"), timeout=10).status_code == 200
    # Once the first has stopped, the file is free again.
    with running_server(tmp_path / "again", database=database, engine=True, args=key) as again:
        assert again.process is not None and again.process.poll() is None


def test_no_access_log_leaves_the_request_lines_out(tmp_path: Path) -> None:
    for flag, logged in (("--access-log", True), ("--no-access-log", False)):
        with running_server(tmp_path / flag, args=[flag]) as server:
            for _ in range(3):
                assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200
            log = server.log()
        assert ('"GET /healthz HTTP/1.1" 200' in log) is logged, log


def test_a_removed_option_still_starts_with_a_warning(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    database = f"sqlite:///{tmp_path / 'w.sqlite3'}"
    worker = start_worker(database, log, ["--collection-share", "0.5"])
    try:
        wait_until(lambda: "Horarium worker running" in log.read_text(), "the worker to start")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert "Warning: --collection-share (HORARIUM_COLLECTION_SHARE) no longer does anything" in (
        log.read_text()
    )


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_malformed_smtp_url_is_refused_without_its_password(tmp_path: Path, command: str) -> None:
    port = ["--port", str(free_port())] if command == "serve" else []
    env = {"HORARIUM_SMTP_URL": "smtp://ops:hunter2@mail.example.com/inbox"}
    run = horarium(command, "--data-dir", str(tmp_path), *port, env=env)
    line = one_line_error(run)
    assert line == "Error: --smtp-url: takes no path, query or fragment"
    assert "hunter2" not in run.stderr
