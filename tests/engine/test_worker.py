"""`horarium worker`: the scheduler alone, as separate processes sharing the database with an
API-only `horarium serve` — two workers on PostgreSQL (scale-out), one on the SQLite file."""

from __future__ import annotations

from pathlib import Path

from tests.engine.cluster_support import (
    API,
    COLLECTION,
    cluster,
    http_action,
    make_collection,
    stop_workers,
)
from tests.engine.live_servers import Recorder, listening, wait_until


def test_workers_run_every_job_exactly_once(db_url: str, tmp_path: Path) -> None:
    sink = Recorder()
    # One worker on SQLite; on PostgreSQL two, one on each event loop.
    loops = ["uvloop", "asyncio"] if db_url.startswith("postgresql") else ["auto"]
    with listening(sink) as url, cluster(tmp_path, len(loops), database=db_url) as nodes:
        nodes.start_workers(*(["--loop", loop] for loop in loops))
        http = nodes.http
        make_collection(http)
        names = [f"job{i}" for i in range(30)]
        for name in names:
            body = {"properties": {"action": http_action(f"{url}/{name}")}}
            response = http.put(f"{COLLECTION}/jobs/{name}", params=API, json=body)
            assert response.status_code == 201, response.text

        def all_completed() -> bool:
            listing = http.get(f"{COLLECTION}/jobs", params=API).json()["value"]
            return all(j["properties"]["state"].lower() == "completed" for j in listing)

        wait_until(all_completed, 60, "every job to complete")
        assert sorted(r.path for r in sink.requests) == sorted(f"/{n}" for n in names)
        for name in names:
            history = http.get(f"{COLLECTION}/jobs/{name}/history", params=API).json()
            assert len(history["value"]) == 1
        assert stop_workers(nodes.workers, timeout=20) == [0] * len(loops)
    for i, loop in enumerate(loops):
        shown = "uvloop" if loop == "auto" else loop
        assert f"event loop {shown})" in nodes.logs[i].read_text()
