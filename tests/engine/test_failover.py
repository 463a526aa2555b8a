"""Failover in seconds: three `horarium worker` processes on PostgreSQL, one killed with -9 in
the middle of a burst; the others take its executions over once its heartbeat is older than
`--node-timeout`, not when its five-minute leases run out, and run again only what it held."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.engine.cluster_support import (
    cluster,
    deliveries,
    executions_recorded,
    held_by,
    http_action,
    iso,
    job_of,
    kill_workers,
    log_lines,
    make_collection,
    put_jobs,
    stop_workers,
)
from tests.engine.live_servers import Recorder, listening, wait_until

pytestmark = pytest.mark.postgres

JOBS = 150
ARGS = ["--node-timeout", "3", "--max-in-flight", "20", "--batch-size", "10"]


def test_the_executions_of_a_killed_worker_run_again_within_seconds(tmp_path: Path) -> None:
    sink = Recorder()
    with listening(sink) as url, cluster(tmp_path, 3, ARGS) as nodes:
        http = nodes.http
        make_collection(http)
        nodes.start_workers()
        start = datetime.now(UTC) + timedelta(seconds=60)
        names = [f"job{i}" for i in range(JOBS)]
        for name in names:
            sink.slow(f"/{name}", 1.5)
        put_jobs(
            http,
            {n: {"action": http_action(f"{url}/{n}"), "startTime": iso(start)} for n in names},
        )
        victim = nodes.workers[0]
        # Killed mid-burst while it holds executions (under load the other two may have taken
        # the burst's first batches alone).
        wait_until(
            lambda: len(sink.requests) >= 30 and held_by(nodes.database, victim.pid),
            120,
            "the burst to start, the victim holding executions",
        )
        kill_workers([victim])
        killed_at = time.monotonic()
        held = held_by(nodes.database, victim.pid)  # its leases stay until taken over
        assert held, "the killed worker held nothing"

        wait_until(lambda: len(deliveries(sink)) >= JOBS, 60, "every execution")
        took = time.monotonic() - killed_at
        assert took < 30, f"took {took:.1f} s; the leases are 300 s"
        wait_until(lambda: executions_recorded(http) >= JOBS, 30, "every record")
        seen = deliveries(sink)
        twice = {job_of(sink, tag) for tag, n in seen.items() if n > 1}
        assert twice <= held
        assert stop_workers(nodes.workers[1:]) == [0, 0]
    assert log_lines(nodes.logs[1:], "taking over")
    assert log_lines(nodes.logs, "deadlock", "Traceback") == []
