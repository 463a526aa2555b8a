"""Failover in seconds: three `horarium worker` processes on PostgreSQL, one killed with -9 in
the middle of a burst; the others take its executions over once its heartbeat is older than
`--node-timeout`, not when its five-minute leases run out, and run again only what it held."""

from __future__ import annotations

import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from tests.engine.cluster_support import (
    deliveries,
    executions_recorded,
    held_by,
    http_action,
    iso,
    job_of,
    log_lines,
    make_collection,
    put_jobs,
    start_worker,
)
from tests.engine.live_servers import LiveServers, Recorder, wait_until
from tests.server_process import running_server
from tests.support import fresh_pg_database

pytestmark = pytest.mark.postgres

JOBS = 150
ARGS = ["--node-timeout", "3", "--max-in-flight", "20", "--batch-size", "10"]


def test_the_executions_of_a_killed_worker_run_again_within_seconds(tmp_path: Path) -> None:
    servers = LiveServers()
    sink = Recorder()
    url = servers.sink(sink)
    logs = [tmp_path / f"worker{i}.log" for i in range(3)]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with (
            fresh_pg_database() as database,
            running_server(tmp_path / "api", database=database, engine=False) as api,
        ):
            http = httpx.Client(base_url=api.base_url, timeout=60, headers=api.auth_headers())
            make_collection(http)
            key = api.data_dir / "secret.key"
            workers = [start_worker(database, log, key, ARGS) for log in logs]
            start = datetime.now(UTC) + timedelta(seconds=60)
            names = [f"job{i}" for i in range(JOBS)]
            for name in names:
                sink.slow(f"/{name}", 1.5)
            put_jobs(
                http,
                {n: {"action": http_action(f"{url}/{n}"), "startTime": iso(start)} for n in names},
            )
            wait_until(lambda: len(sink.requests) >= 30, 120, "the burst to start")
            victim = workers[0]
            victim.kill()
            victim.wait(10)
            killed_at = time.monotonic()
            held = held_by(database, victim.pid)  # its leases stay until taken over
            assert held, "the killed worker held nothing"

            wait_until(lambda: len(deliveries(sink)) >= JOBS, 60, "every execution")
            took = time.monotonic() - killed_at
            assert took < 30, f"took {took:.1f} s; the leases are 300 s"
            wait_until(lambda: executions_recorded(http) >= JOBS, 30, "every record")
            seen = deliveries(sink)
            twice = {job_of(sink, tag) for tag, n in seen.items() if n > 1}
            assert twice <= held
            for worker in workers[1:]:
                worker.send_signal(signal.SIGTERM)
                assert worker.wait(30) == 0
        assert log_lines(logs[1:], "taking over")
        assert log_lines(logs, "deadlock", "Traceback") == []
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
        servers.close()
