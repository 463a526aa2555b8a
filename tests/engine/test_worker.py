"""`horarium worker`: the scheduler alone, as separate processes sharing the database with an
API-only `horarium serve` — two workers on PostgreSQL (scale-out), one on the SQLite file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.engine.live_servers import LiveServers, Recorder, wait_until
from tests.server_process import running_server
from tests.support import fresh_pg_database

API = {"api-version": "2016-03-01"}
COLLECTION = (
    "/subscriptions/sub-w/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/work"
)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    else:
        with fresh_pg_database() as url:
            yield url


def start_worker(database: str, log: Path, loop: str, key_file: Path) -> subprocess.Popen[bytes]:
    """A worker on the database, with the API process's secret key (every process on one
    database shares it)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "horarium.cli",
                "worker",
                "--database",
                database,
                "--loop",
                loop,
                "--secret-key-file",
                str(key_file),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def test_workers_run_every_job_exactly_once(database: str, tmp_path: Path) -> None:
    servers = LiveServers()
    sink = Recorder()
    url = servers.sink(sink)
    # One worker on SQLite; on PostgreSQL two, one on each event loop.
    loops = ["uvloop", "asyncio"] if database.startswith("postgresql") else ["auto"]
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with running_server(tmp_path / "api", database=database, engine=False) as api_server:
            workers = [
                start_worker(
                    database, tmp_path / f"worker{i}.log", loop, api_server.data_dir / "secret.key"
                )
                for i, loop in enumerate(loops)
            ]
            http = httpx.Client(
                base_url=api_server.base_url, timeout=30, headers=api_server.auth_headers()
            )
            body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
            assert http.put(COLLECTION, params=API, json=body).status_code == 201
            names = [f"job{i}" for i in range(30)]
            for name in names:
                action = {"type": "Http", "request": {"uri": f"{url}/{name}", "method": "GET"}}
                response = http.put(
                    f"{COLLECTION}/jobs/{name}", params=API, json={"properties": {"action": action}}
                )
                assert response.status_code == 201, response.text

            def all_completed() -> bool:
                listing = http.get(f"{COLLECTION}/jobs", params=API).json()["value"]
                return all(j["properties"]["state"].lower() == "completed" for j in listing)

            wait_until(all_completed, 60, "every job to complete")
            assert sorted(r.path for r in sink.requests) == sorted(f"/{n}" for n in names)
            for name in names:
                history = http.get(f"{COLLECTION}/jobs/{name}/history", params=API).json()
                assert len(history["value"]) == 1
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
            assert worker.wait(20) == 0
        for i, loop in enumerate(loops):
            shown = "uvloop" if loop == "auto" else loop
            assert f"event loop {shown})" in (tmp_path / f"worker{i}.log").read_text()
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
        servers.close()
