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
        started = [f"event loop {'uvloop' if loop == 'auto' else loop})" for loop in loops]
        # A worker SIGTERMed while it still starts ends by the signal: on a loaded machine the
        # other worker may have run every job before this one is up.
        wait_until(
            lambda: all(
                line in log.read_text() for line, log in zip(started, nodes.logs, strict=True)
            ),
            60,
            "every worker to say it started, on its event loop",
        )
        assert stop_workers(nodes.workers, timeout=20) == [0] * len(loops)
