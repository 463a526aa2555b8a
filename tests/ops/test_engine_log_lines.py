"""The engine's INFO lines — its start, its takeovers — are in the log of `horarium serve` as in
that of `horarium worker` (both log through `horarium.logs`, Horarium's loggers at INFO)."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx

from tests.engine.live_servers import LiveServers, Recorder
from tests.ops.ops_support import Jobs
from tests.server_process import running_server, start_worker
from tests.support import wait_until

STARTED = "INFO horarium.engine.service scheduler started (owner "


def test_serve_logs_the_engine_start_and_its_takeovers(tmp_path: Path) -> None:
    servers = LiveServers()
    sink = Recorder()
    sink.slow("/slow", 120.0)  # held by the engine until it is killed
    url = servers.sink(sink)
    try:
        with running_server(tmp_path, engine=True) as server:
            wait_until(lambda: STARTED in server.log(), "the engine's start line")
            Jobs(server).put("slow", f"{url}/slow")
            wait_until(lambda: sink.on("/slow"), "the slow job to start")
            process = server.process
            assert process is not None
            process.send_signal(signal.SIGKILL)
            process.wait(30)
            server.process = None
            server.start()
            wait_until(lambda: server.log().count(STARTED) == 2, "the second start line")
            wait_until(
                lambda: (
                    "INFO horarium.engine.dispatcher taking over 1 executions of a process"
                    " that is gone" in server.log()
                ),
                "the takeover line",
            )
            assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200
    finally:
        servers.close()


def test_worker_logs_the_engine_start(tmp_path: Path) -> None:
    with running_server(tmp_path / "api") as server:
        log = tmp_path / "worker" / "worker.log"
        log.parent.mkdir()
        database = f"sqlite:///{server.data_dir / 'horarium.sqlite3'}"
        worker = start_worker(database, log, secret_key_file=server.data_dir / "secret.key")
        try:
            wait_until(lambda: STARTED in log.read_text(errors="replace"), "the start line")
        finally:
            worker.terminate()
            worker.wait(30)
