"""Deadlines in a cluster: two `horarium worker` processes on one PostgreSQL database. Six jobs
whose actions hang on a local receiver overrun their `finishWithin`; six jobs found 30 s late
start past their `startWithin`. Each ExecutionOverran and ExecutionLate is raised by one node,
once — also when a node holding hanging executions is killed with -9 and the other runs them
again from their start."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.api.test_api_deadlines import Receiver
from tests.engine.cluster_support import (
    API,
    COLLECTION,
    cluster,
    held_by,
    http_action,
    iso,
    kill_workers,
    make_collection,
    put_jobs,
)
from tests.support import wait_until

pytestmark = pytest.mark.postgres

JOBS = 6  # of each kind


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _raised(receiver: Receiver) -> dict[tuple[str, str], set[str]]:
    """(job, event) → the ids of the notifications received (a redelivery repeats one)."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for body in receiver.events():
        found[(body["job"], body["event"])].add(body["id"])
    return found


def _count(receiver: Receiver, event: str) -> int:
    return sum(1 for _, e in _raised(receiver) if e == event)


def _job(url: str, start: datetime, **deadlines: str) -> dict[str, Any]:
    action = {**http_action(url), "retryPolicy": {"retryType": "None"}}
    return {
        "startTime": iso(start),
        "action": action,
        "executionPolicy": {"deadlines": deadlines},
    }


def _state(nodes: Any, job: str) -> str:
    found = nodes.http.get(f"{COLLECTION}/jobs/{job}", params=API).json()
    return str(found["properties"]["state"]).lower()


def test_each_deadline_event_is_raised_once_across_nodes_and_a_failover(
    tmp_path: Path, receiver: Receiver
) -> None:
    args = ["--poll-interval", "0.2", "--node-timeout", "2"]
    with cluster(tmp_path, 2, args) as nodes:
        hook = {
            "events": ["ExecutionLate", "ExecutionOverran"],
            "uri": receiver.base_url + "/notify",
            "secret": "cluster-secret-0123",
        }
        make_collection(nodes.http, notifications=[hook])
        base = receiver.base_url
        # A one-time job whose start time has passed is due at once, when it is written: with
        # no engine running yet, these pass their startWithin before any node can start them.
        late = {
            f"late{i}": _job(
                f"{base}/late/{i}", datetime.now(UTC) - timedelta(seconds=30), startWithin="PT1S"
            )
            for i in range(JOBS)
        }
        put_jobs(nodes.http, late)
        written = datetime.now(UTC)
        wait_until(
            lambda: datetime.now(UTC) > written + timedelta(seconds=1.5),
            "the late jobs to pass their startWithin",
        )
        nodes.start_workers()
        now = datetime.now(UTC)
        hanging = {
            f"hang{i}": _job(f"{base}/hang/{i}", now, finishWithin="00:00:01") for i in range(JOBS)
        }
        put_jobs(nodes.http, hanging)
        wait_until(lambda: _count(receiver, "ExecutionOverran") == JOBS, "every overrun")
        wait_until(lambda: _count(receiver, "ExecutionLate") == JOBS, "every late start")

        # Kill a node holding hanging executions: the other runs them again, from the start.
        holders = [w for w in nodes.workers if held_by(nodes.database, w.pid) & set(hanging)]
        victim = holders[0]
        taken = held_by(nodes.database, victim.pid) & set(hanging)
        kill_workers([victim])
        again = JOBS + len(taken)
        wait_until(lambda: len(receiver.requests_to_prefix("/hang/")) == again, "the re-runs")
        receiver.release.set()
        for name in [*hanging, *late]:
            wait_until(lambda name=name: _state(nodes, name) == "completed", f"{name} to end")

        # A later overrun, raised by a later pass: any second event above would be here by then.
        receiver.release.clear()
        later = _job(f"{base}/hang/later", datetime.now(UTC), finishWithin="00:00:01")
        put_jobs(nodes.http, {"later": later})
        wait_until(lambda: ("later", "ExecutionOverran") in _raised(receiver), "the later one")
        receiver.release.set()

        raised = _raised(receiver)
        assert {len(ids) for ids in raised.values()} == {1}
        assert sorted(raised) == sorted(
            [(name, "ExecutionOverran") for name in [*hanging, "later"]]
            + [(name, "ExecutionLate") for name in late]
        )
        for body in receiver.events():
            execution = body["execution"]
            if body["event"] == "ExecutionLate" and execution["startTime"] is not None:
                # raised at its start (else: by the look, before a node took it)
                start = datetime.fromisoformat(execution["startTime"].replace("Z", "+00:00"))
                expected = execution["expectedExecutionTime"].replace("Z", "+00:00")
                assert start > datetime.fromisoformat(expected) + timedelta(seconds=1)
