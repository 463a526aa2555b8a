"""Chaos: three `horarium worker` processes on PostgreSQL under a steady load (one-time jobs
falling due every few tenths of a second, minute jobs), killed with -9 and restarted at random
moments. At the end every execution was delivered, none lost; only executions a killed worker
held were delivered twice; each job's history holds each execution once and its counters agree
with it. About three minutes."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.engine.cluster_support import (
    cluster,
    counters_agree_with_history,
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
)
from tests.engine.live_servers import Recorder, listening, wait_until

pytestmark = pytest.mark.postgres

ONCE = 160  # one every 0.3 s for 48 s
MINUTELY = 20  # twice each, a minute apart
ARGS = ["--node-timeout", "2", "--max-in-flight", "30", "--batch-size", "10"]


def test_workers_killed_at_random_lose_nothing_and_repeat_only_what_they_held(
    tmp_path: Path,
) -> None:
    chance = random.Random(12)
    sink = Recorder()
    held: set[str] = set()
    with listening(sink) as url, cluster(tmp_path, 3, ARGS) as nodes:
        http = nodes.http
        make_collection(http)
        nodes.start_workers()
        base = datetime.now(UTC) + timedelta(seconds=40)
        bodies = {
            f"once{i}": {
                "action": http_action(f"{url}/once{i}"),
                "startTime": iso(base + timedelta(seconds=0.3 * i)),
            }
            for i in range(ONCE)
        }
        for i in range(MINUTELY):
            bodies[f"minutely{i}"] = {
                "action": http_action(f"{url}/minutely{i}"),
                "startTime": iso(base),
                "recurrence": {"frequency": "Minute", "interval": 1, "count": 2},
            }
        for name in bodies:
            sink.slow(f"/{name}", 0.5)
        put_jobs(http, bodies)
        assert datetime.now(UTC) < base, "the jobs took too long to create"
        expected = ONCE + 2 * MINUTELY

        kills = 0
        end = base + timedelta(seconds=65)
        wait_until(lambda: sink.requests, 90, "the load to start")
        while datetime.now(UTC) < end:
            time.sleep(chance.uniform(3, 7))
            slot = chance.randrange(len(nodes.workers))
            victim = nodes.workers[slot]
            kill_workers([victim])
            held |= held_by(nodes.database, victim.pid)
            kills += 1
            time.sleep(chance.uniform(0, 2))
            nodes.workers[slot] = nodes.worker(slot)

        wait_until(lambda: len(deliveries(sink)) >= expected, 90, "every execution")
        wait_until(lambda: executions_recorded(http) >= expected, 60, "every record")
        seen = deliveries(sink)
        assert len(seen) == expected  # none lost, none made up
        twice = {job_of(sink, tag) for tag, n in seen.items() if n > 1}
        assert twice <= held, twice - held
        assert executions_recorded(http) == expected  # each once in history
        assert counters_agree_with_history(http, list(bodies)) == []
        assert kills >= 8
    assert log_lines(nodes.logs, "deadlock", "recording") == []
