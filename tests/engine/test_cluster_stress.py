"""Three `horarium worker` processes on one PostgreSQL database with short leases (3 s, renewed
every second while recording runs flat out): the lease renewals, the records, the claims and the
API's writes lock rows in one order, so no transaction is chosen as a deadlock's victim and no
execution is delivered twice.

Why 3 s: a renewal's lease must be written before the previous one runs out, so a third of the
lease plus how late the renewal task wakes plus how long the renewal takes must stay below the
lease. Under the whole suite on two loaded cores the workers' event loops woke their renewals up
to 0.37 s late and transactions took up to 0.5 s (docs/testing.md): a 1 s lease left no margin
and, on slower machines, ran out; that measures the machine, not the lock order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.engine.cluster_support import (
    cluster,
    counters_agree_with_history,
    deliveries,
    executions_recorded,
    http_action,
    iso,
    log_lines,
    make_collection,
    put_jobs,
    repeated_deliveries,
    run_now,
    stop_workers,
)
from tests.engine.live_servers import Recorder, listening, wait_until

pytestmark = pytest.mark.postgres

ONCE_JOBS = 300
RUN_NOW_JOBS = 150
LEASE = "3"  # renewed every second
ARGS = ["--lease-seconds", LEASE, "--poll-interval", "0.2"]


def test_short_leases_under_a_burst_deliver_each_execution_once_without_deadlocks(
    tmp_path: Path,
) -> None:
    sink = Recorder()
    sink.slow("/hit", 0.2)  # keeps hundreds in flight, their leases renewed meanwhile
    with listening(sink) as url, cluster(tmp_path, 3, ARGS) as nodes:
        http = nodes.http
        make_collection(http)
        start = datetime.now(UTC) + timedelta(seconds=90)
        once = {
            f"once{i}": {"action": http_action(f"{url}/hit"), "startTime": iso(start)}
            for i in range(ONCE_JOBS)
        }
        later = {
            f"later{i}": {
                "action": http_action(f"{url}/hit"),
                "startTime": iso(start + timedelta(days=1)),
                "recurrence": {"frequency": "Day", "interval": 1},
            }
            for i in range(RUN_NOW_JOBS)
        }
        put_jobs(http, {**once, **later})
        assert datetime.now(UTC) < start, "the jobs took too long to create"
        nodes.start_workers()
        run_now(http, list(later))  # job_executions rows, leased on their own rows

        expected = ONCE_JOBS + RUN_NOW_JOBS
        wait_until(lambda: len(deliveries(sink)) >= expected, 180, "every execution")
        # Nothing more arrives: a duplicate would come once a lease ran out.
        wait_until(lambda: executions_recorded(http) >= expected, 60, "every execution recorded")
        seen = deliveries(sink)
        assert len(seen) == expected
        assert repeated_deliveries(sink) == []
        assert counters_agree_with_history(http, [*once, *later]) == []
        assert stop_workers(nodes.workers) == [0, 0, 0]
    assert log_lines(nodes.logs, "deadlock", "recording", "Traceback") == []
