"""Check-in monitors in a cluster: two `horarium worker` processes on one PostgreSQL database
watch 20 monitors that miss their check-in at the same instant. Each monitor's MonitorLate and
MonitorDown are decided once — one event id each, whichever node decided — also when one node
is killed between the two (the other decides what is left)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.engine.cluster_support import API, COLLECTION, cluster, kill_workers, make_collection
from tests.http_receiver import Receiver
from tests.support import wait_until

pytestmark = pytest.mark.postgres

MONITORS = 20
# Long enough for the workers to start on a loaded machine and for every MonitorLate to be
# delivered (and its outbox row settled) before the kill: a node killed while holding
# undelivered rows would hold them for its lease (120 s).
GRACE_SECONDS = 12


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def _decided(receiver: Receiver) -> dict[tuple[str, str], set[str]]:
    """(monitor, event) → the ids of the notifications received (a redelivery repeats one)."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for request in receiver.requests_to("/hook"):
        body = json.loads(request["body"])
        found[(body["monitor"], body["event"])].add(body["id"])
    return found


def _count(receiver: Receiver, event: str) -> int:
    return sum(1 for monitor, e in _decided(receiver) if e == event)


def test_each_change_is_decided_once_across_nodes_and_a_failover(
    tmp_path: Path, receiver: Receiver
) -> None:
    with cluster(tmp_path, 2, ["--poll-interval", "0.2"]) as nodes:
        hook = {
            "events": ["MonitorLate", "MonitorDown"],
            "uri": receiver.base_url + "/hook",
            "secret": "cluster-secret-0123",
        }
        make_collection(nodes.http, notifications=[hook])
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=10)
        properties: dict[str, Any] = {
            "startTime": due.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "recurrence": {"frequency": "Hour"},
            "grace": f"00:00:{GRACE_SECONDS:02d}",
        }

        def put(i: int) -> None:
            path = f"{COLLECTION}/monitors/m{i:02d}"
            response = nodes.http.put(path, params=API, json={"properties": properties})
            assert response.status_code == 201, response.text

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(put, range(MONITORS)))
        # (a monitor made after `due` would expect its first check-in an hour later)
        assert datetime.now(UTC) < due, "the monitors were made too slowly for this test"
        nodes.start_workers()

        wait_until(lambda: _count(receiver, "MonitorLate") == MONITORS, "every MonitorLate")
        kill_workers(nodes.workers[:1])  # the other node decides every MonitorDown
        wait_until(lambda: _count(receiver, "MonitorDown") == MONITORS, "every MonitorDown")

        decided = _decided(receiver)
        assert {len(ids) for ids in decided.values()} == {1}
        assert len(decided) == 2 * MONITORS
        listed = nodes.http.get(f"{COLLECTION}/monitors", params=API).json()["value"]
        assert {m["properties"]["status"] for m in listed} == {"Down"}
        downs = [json.loads(r["body"]) for r in receiver.requests_to("/hook")]
        down_at = due + timedelta(seconds=GRACE_SECONDS)
        assert all(
            datetime.fromisoformat(d["time"].replace("Z", "+00:00")) >= down_at
            for d in downs
            if d["event"] == "MonitorDown"
        )
