"""Several `serve` processes and workers on one database behave as one service: a write through
one node's API wakes the engine of another at once (PostgreSQL `LISTEN/NOTIFY`) rather than
within its poll interval, collection quotas hold under concurrent writes to different nodes,
and `/readyz?verbose` shows each node's view of the cluster. On SQLite the API wakes the engine
of its own process, as before.

REAL TIME: the engines poll every POLL seconds; a job runs within WOKEN seconds only because it
was woken (the bound is generous, and far below the poll interval)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from horarium.store.core.wakeups import APPLICATION_NAME
from tests import forkserver
from tests.engine.live_servers import LiveServers, Recorder, wait_until
from tests.migrated_databases import migrated_pg_database
from tests.ops.ops_support import new_key
from tests.server_process import ServerProcess, running_server, start_worker
from tests.support import free_port

API = {"api-version": "2016-03-01"}
COLLECTION = (
    "/subscriptions/sub-k/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/wake"
)
POLL = "30"  # seconds: the engines' poll interval
WOKEN = 10.0  # seconds: a woken engine runs a due job well within this


def _iso(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _client(server: ServerProcess) -> httpx.Client:
    return httpx.Client(base_url=server.base_url, timeout=30, headers=server.auth_headers())


def _make_collection(http: httpx.Client, quota: dict[str, Any] | None = None) -> None:
    properties: dict[str, Any] = {"sku": {"name": "P20Premium"}}
    if quota is not None:
        properties["quota"] = quota
    body = {"location": "West US", "properties": properties}
    response = http.put(COLLECTION, params=API, json=body)
    assert response.status_code == 201, response.text


def _put_job(http: httpx.Client, name: str, properties: dict[str, Any]) -> httpx.Response:
    return http.put(f"{COLLECTION}/jobs/{name}", params=API, json={"properties": properties})


def _now_job(url: str) -> dict[str, Any]:
    """A one-time job due now."""
    return {
        "startTime": _iso(datetime.now(UTC) - timedelta(seconds=1)),
        "action": {"type": "Http", "request": {"uri": url, "method": "GET"}},
    }


def _view(server: ServerProcess, port: int | None = None) -> dict[str, Any]:
    """`/readyz?verbose` of the server (or of a worker's metrics port), with the admin token."""
    base = server.base_url if port is None else f"http://127.0.0.1:{port}"
    answer = httpx.get(
        f"{base}/readyz", params={"verbose": ""}, headers=server.auth_headers(), timeout=15
    )
    assert answer.status_code == 200, answer.text
    node: dict[str, Any] = answer.json()["node"]
    return node


def _runs_soon(sink: Recorder, path: str, since: float) -> float:
    """Seconds from `since` until the sink received `path`."""
    hits = wait_until(lambda: sink.on(path), 60, f"{path} to run")
    return float(hits[0].at - since)


@pytest.fixture
def sink() -> Iterator[tuple[Recorder, str]]:
    servers = LiveServers()
    recorder = Recorder()
    try:
        yield recorder, servers.sink(recorder)
    finally:
        servers.close()


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, str]]:
    """On one PostgreSQL database: `serve` with its engine (polling every POLL seconds), and an
    API-only `serve` sharing its secret key and admin token."""
    with (
        migrated_pg_database() as url,
        running_server(
            tmp_path / "engine", database=url, engine=True, args=["--poll-interval", POLL]
        ) as engine,
        running_server(
            tmp_path / "api",
            database=url,
            engine=False,
            args=["--secret-key-file", str(engine.data_dir / "secret.key")],
        ) as api,
    ):
        api.token = engine.token
        wait_until(lambda: _view(engine)["listening"], 60, "the engine to listen")
        yield engine, api, url


@pytest.mark.postgres
def test_a_write_on_one_node_wakes_the_engine_on_another(
    two_nodes: tuple[ServerProcess, ServerProcess, str], sink: tuple[Recorder, str]
) -> None:
    engine, api, _ = two_nodes
    recorder, url = sink
    http = _client(api)
    _make_collection(http)

    put_at = time.time()
    assert _put_job(http, "once", _now_job(f"{url}/once")).status_code == 201
    assert _runs_soon(recorder, "/once", put_at) < WOKEN

    later = {
        "startTime": _iso(datetime.now(UTC) + timedelta(days=1)),
        "action": {"type": "Http", "request": {"uri": f"{url}/later", "method": "GET"}},
        "recurrence": {"frequency": "Day", "interval": 1},
    }
    assert _put_job(http, "later", later).status_code == 201
    run_at = time.time()
    assert http.post(f"{COLLECTION}/jobs/later/run", params=API).status_code == 200
    assert _runs_soon(recorder, "/later", run_at) < WOKEN
    assert "Traceback" not in engine.log()


@pytest.mark.postgres
def test_the_engine_listens_again_when_its_connection_is_lost(
    two_nodes: tuple[ServerProcess, ServerProcess, str], sink: tuple[Recorder, str]
) -> None:
    engine, api, database = two_nodes
    recorder, url = sink
    http = _client(api)
    _make_collection(http)

    async def end_the_listening_connection() -> int:
        conn = await asyncpg.connect(database)
        try:
            ended = await conn.fetch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = $1",
                APPLICATION_NAME,
            )
            return len(ended)
        finally:
            await conn.close()

    wait_until(lambda: _view(engine)["listening"], 60, "the engine to listen")
    assert asyncio.run(end_the_listening_connection()) == 1
    wait_until(
        lambda: "the connection listening for writes was lost" in engine.log(),
        60,
        "the engine to notice",
    )
    wait_until(lambda: _view(engine)["listening"], 60, "the engine to listen again")

    put_at = time.time()
    assert _put_job(http, "after", _now_job(f"{url}/after")).status_code == 201
    assert _runs_soon(recorder, "/after", put_at) < WOKEN
    log = engine.log()
    assert "Traceback" not in log, log
    assert "the engine retries until it answers" not in log, log  # no outage was reported


@pytest.mark.postgres
def test_collection_quota_holds_under_concurrent_writes_to_two_nodes(
    two_nodes: tuple[ServerProcess, ServerProcess, str],
) -> None:
    engine, api, _ = two_nodes
    clients = [_client(engine), _client(api)]
    _make_collection(clients[1], quota={"maxJobCount": 10})
    later = {
        "startTime": _iso(datetime.now(UTC) + timedelta(days=1)),
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/never", "method": "GET"}},
    }

    def create(i: int) -> httpx.Response:
        return _put_job(clients[i % 2], f"job{i:02d}", later)

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(create, range(40)))

    created = [a for a in answers if a.status_code == 201]
    refused = [a for a in answers if a.status_code != 201]
    assert len(created) == 10, [a.status_code for a in answers]
    for answer in refused:
        assert answer.status_code == 409, answer.text
        error = answer.json()["error"]
        assert error["code"] == "JobCountQuotaExceeded", error
        assert "maxJobCount" in error["message"]
    listed = clients[0].get(f"{COLLECTION}/jobs", params=API).json()["value"]
    assert len(listed) == 10


@pytest.mark.postgres
def test_readyz_verbose_shows_each_nodes_view(
    two_nodes: tuple[ServerProcess, ServerProcess, str], tmp_path: Path
) -> None:
    engine, api, database = two_nodes
    metrics_port = free_port()
    worker: forkserver.AnyProcess = start_worker(
        database,
        tmp_path / "worker.log",
        ["--metrics-port", str(metrics_port), "--poll-interval", POLL],
        engine.data_dir / "secret.key",
    )
    try:

        def worker_view() -> dict[str, Any] | None:
            try:
                view = _view(engine, metrics_port)
            except (httpx.TransportError, AssertionError):
                return None
            return view if view["listening"] and len(view["liveNodes"]) == 2 else None

        seen_by_worker = wait_until(worker_view, 60, "the worker to see both engines")
        seen_by_engine = _view(engine)
        seen_by_api = _view(api)
    finally:
        worker.terminate()
        worker.wait(30)

    engine_id, worker_id = seen_by_engine["id"], seen_by_worker["id"]
    assert engine_id and worker_id and engine_id != worker_id
    assert seen_by_engine["roles"] == ["api", "engine"]
    assert seen_by_worker["roles"] == ["engine"]
    assert seen_by_api["roles"] == ["api"]
    assert seen_by_api["id"] is None and seen_by_api["listening"] is None
    for view in (seen_by_engine, seen_by_worker):
        assert view["databaseReachable"] is True
        assert view["listening"] is True
        assert view["leasesHeld"] == 0
        assert 0 <= view["heartbeatAgeSeconds"] < 15  # the node timeout
    for view in (seen_by_engine, seen_by_worker, seen_by_api):
        assert view["databaseReachable"] is True
        live = {node["id"]: node for node in view["liveNodes"]}
        assert set(live) == {engine_id, worker_id}, view
        assert live[engine_id]["pid"] == seen_by_engine["pid"]
        assert live[worker_id]["pid"] == seen_by_worker["pid"]
        assert all(0 <= node["lastBeatAgeSeconds"] < 15 for node in live.values())

    # The plain probe answers as it always did, and the view takes a token.
    plain = httpx.get(api.url("/readyz"), timeout=15)
    assert (plain.status_code, plain.json()) == (200, {"status": "ready"})
    anonymous = httpx.get(api.url("/readyz"), params={"verbose": ""}, timeout=15)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "AuthenticationFailed"


def test_on_sqlite_the_api_wakes_the_engine_of_its_process(
    tmp_path: Path, sink: tuple[Recorder, str]
) -> None:
    recorder, url = sink
    with running_server(tmp_path, engine=True, args=["--poll-interval", POLL]) as server:
        http = _client(server)
        _make_collection(http)
        put_at = time.time()
        assert _put_job(http, "once", _now_job(f"{url}/once")).status_code == 201
        assert _runs_soon(recorder, "/once", put_at) < WOKEN
        view = _view(server)
        narrow = new_key(server, "sub-k")  # reaches one subscription only
        refused = httpx.get(
            server.url("/readyz"),
            params={"verbose": ""},
            headers={"Authorization": f"Bearer {narrow}"},
            timeout=15,
        )
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "AuthorizationFailed"
    assert "/readyz?verbose" in refused.json()["error"]["message"]
    assert view["roles"] == ["api", "engine"]
    assert view["listening"] is None  # SQLite delivers no notifications: none needed
    assert [node["id"] for node in view["liveNodes"]] == [view["id"]]
