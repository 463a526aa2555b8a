"""A PostgreSQL outage under load, survived: two `horarium serve` processes (API and engine) on
one database reached through a TCP proxy on 127.0.0.1 (`db_proxy`), which the test cuts for
OUTAGE seconds — every connection dropped, new ones refused — while jobs fall due and clients
keep calling the API. The shared PostgreSQL itself is never touched.

REAL TIME (about a minute and a half). Timing bounds only how long the test waits."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.db_proxy import DatabaseProxy
from tests.db_proxy import proxied_database as proxied_database
from tests.engine.live_servers import LiveServers, Recorder, wait_until
from tests.server_process import ServerProcess

pytestmark = pytest.mark.postgres

API = {"api-version": "2016-03-01"}
OUTAGE = 30.0  # seconds the database refuses connections (the figure)
JOBS = 45  # one-time jobs, one due each second from a few seconds after the start


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Answers:
    """Every answer the API clients got: (status, body) per call."""

    seen: list[tuple[int, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, response: httpx.Response) -> None:
        try:
            body = response.json() if response.content else None
        except ValueError:
            body = response.text
        with self.lock:
            self.seen.append((response.status_code, body))

    def statuses(self) -> Counter[int]:
        with self.lock:
            return Counter(status for status, _ in self.seen)


def keep_calling(
    server: ServerProcess, collection: str, answers: Answers, stop: threading.Event
) -> None:
    """A client writing and reading jobs through `server` until `stop`."""
    http = httpx.Client(base_url=server.base_url, timeout=30, headers=server.auth_headers())
    probe = f"{collection}/jobs/probe-{server.port}"
    later = iso(datetime.now(UTC) + timedelta(days=1))
    body = {"properties": {"startTime": later, "action": _action("http://127.0.0.1:9/never")}}
    while not stop.is_set():
        for method, path, json in (
            ("PUT", probe, body),
            ("GET", f"{collection}/jobs", None),
            ("GET", probe, None),
        ):
            try:
                answers.add(http.request(method, path, params=API, json=json))
            except httpx.TransportError:
                answers.add(httpx.Response(599))
        time.sleep(0.1)


def _action(uri: str) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "GET"}}


def test_service_survives_a_database_outage_under_load(
    proxied_database: tuple[str, DatabaseProxy], tmp_path: Path
) -> None:
    database, proxy = proxied_database
    servers = LiveServers()
    sink = Recorder()
    sink_url = servers.sink(sink)
    first = ServerProcess(
        tmp_path / "a", database=database, engine=True, env=None, args=[], ca_file=None
    )
    second: ServerProcess | None = None
    stop = threading.Event()
    answers = Answers()
    clients: list[threading.Thread] = []
    try:
        (tmp_path / "a").mkdir()
        first.start()
        (tmp_path / "b").mkdir()
        second = ServerProcess(
            tmp_path / "b",
            database=database,
            engine=True,
            env=None,
            args=["--secret-key-file", str(first.data_dir / "secret.key")],
        )
        second.start()
        second.token = first.token
        http = httpx.Client(base_url=first.base_url, timeout=30, headers=first.auth_headers())
        collection = (
            f"/subscriptions/sub-{uuid.uuid4().hex[:6]}/resourceGroups/rg"
            "/providers/Microsoft.Scheduler/jobCollections/outage"
        )
        body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
        assert http.put(collection, params=API, json=body).status_code == 201
        start = datetime.now(UTC) + timedelta(seconds=5)
        names = [f"job{i:02d}" for i in range(JOBS)]
        for i, name in enumerate(names):
            properties = {
                "startTime": iso(start + timedelta(seconds=i)),
                "action": _action(f"{sink_url}/{name}"),
            }
            response = http.put(
                f"{collection}/jobs/{name}", params=API, json={"properties": properties}
            )
            assert response.status_code == 201, response.text

        for server in (first, second):
            thread = threading.Thread(
                target=keep_calling, args=(server, collection, answers, stop), daemon=True
            )
            thread.start()
            clients.append(thread)

        wait_until(lambda: len(sink.requests) >= 5, 60, "the first jobs to run")
        # Each client's probe exists before the outage (its first PUT answered 201), so that a
        # GET of it is never a 404 for a job nobody could create.
        wait_until(lambda: answers.statuses()[201] >= len(clients), 60, "the probes made")
        proxy.cut()
        cut_at = time.time()
        time.sleep(3)
        ready = httpx.get(first.url("/readyz"), timeout=10)
        assert ready.status_code == 503
        assert ready.json()["error"]["details"][0]["code"] == "DatabaseUnreachable"
        time.sleep(OUTAGE - 3)
        refused_during = answers.statuses()[503]
        proxy.restore()
        restored_at = time.time()

        def all_completed() -> bool:
            response = http.get(f"{collection}/jobs", params=API)
            if response.status_code != 200:
                return False
            jobs = [j for j in response.json()["value"] if "/job" in j["name"]]
            return len(jobs) == JOBS and all(
                j["properties"]["state"].lower() == "completed" for j in jobs
            )

        try:
            wait_until(all_completed, 120, "every job to complete after the outage")
        except AssertionError:
            listing = http.get(f"{collection}/jobs", params=API).json()["value"]
            waiting = {
                j["name"]: j["properties"]["state"]
                for j in listing
                if j["properties"]["state"].lower() != "completed"
            }
            raise AssertionError(f"not completed: {waiting}") from None
        stop.set()
        for thread in clients:
            thread.join(60)

        # The API answered 503 with an ARM error while the database was away, never a 500.
        assert refused_during > 0
        statuses = answers.statuses()
        assert set(statuses) <= {200, 201, 503}, statuses
        for status, answer in answers.seen:
            if status == 503:
                assert answer["error"]["code"] == "ServiceUnavailable", answer
        assert httpx.get(first.url("/readyz"), timeout=10).status_code == 200
        assert httpx.get(second.url("/readyz"), timeout=10).status_code == 200

        # Nothing was lost; an execution ran twice only if it was running when the cut came.
        for name in names:
            hits = sink.on(f"/{name}")
            assert hits, f"{name} never ran"
            if len(hits) > 1:
                assert len({h.headers["x-ms-execution-tag"] for h in hits}) == 1
                assert hits[0].at < restored_at, f"{name} ran twice though due after the outage"
            history = http.get(f"{collection}/jobs/{name}/history", params=API).json()["value"]
            assert len(history) == 1, (name, history)
            assert "Postponed" not in str(history)
        ran_late = [n for n in names if cut_at < sink.on(f"/{n}")[0].at]
        assert ran_late, "no job fell due during the outage: the test proves nothing"

        # Each process said once that it lost the database and once that it is back; no
        # traceback.
        for server in (first, second):
            log = server.log()
            assert "Traceback" not in log, log
            assert log.count("the engine retries until it answers") == 1, log
            assert "the database answers again" in log, log
    finally:
        stop.set()
        first.stop()
        if second is not None:
            second.stop()
        servers.close()
