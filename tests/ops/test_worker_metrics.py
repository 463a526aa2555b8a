"""`horarium worker --metrics-port`: a worker sharing the database with an API-only
`horarium serve` answers /metrics (its own executions), /healthz and /readyz on a port of its
own; /metrics takes a key of the database that reaches every subscription."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests import forkserver
from tests.database_fixtures import db_url as db_url
from tests.ops.ops_support import Jobs, http_target, samples, value
from tests.server_process import running_server, start_worker
from tests.support import free_port, wait_until


def test_a_worker_serves_its_own_metrics_and_probes(db_url: str, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "worker.log"
    worker: forkserver.AnyProcess | None = None
    with http_target() as target, running_server(tmp_path / "api", database=db_url) as api:
        try:
            worker = start_worker(
                db_url, log, ["--metrics-port", str(port)], api.data_dir / "secret.key"
            )
            wait_until(lambda: "Horarium worker running" in log.read_text(), "the worker")
            jobs = Jobs(api)
            jobs.put("worked", f"{target.url}/ok")
            wait_until(lambda: jobs.history("worked"), "the worker to run the job")
            auth = api.auth_headers()

            def counted() -> float:
                answer = httpx.get(f"{base}/metrics", headers=auth, timeout=10)
                assert answer.status_code == 200, answer.text
                found = samples(answer.text)
                return value(found, "horarium_executions_total", outcome="succeeded")

            assert wait_until(counted, "the worker's execution counted") == 1
            refused = httpx.get(f"{base}/metrics", timeout=10)
            alive = httpx.get(f"{base}/healthz", timeout=10)
            ready = httpx.get(f"{base}/readyz", timeout=10)
            elsewhere = httpx.get(f"{base}/subscriptions/x", headers=auth, timeout=10)
        finally:
            if worker is not None:
                worker.terminate()
                worker.wait(timeout=30)
    assert refused.status_code == 401
    assert (alive.status_code, ready.status_code) == (200, 200)
    assert ready.json() == {"status": "ready"}
    assert elsewhere.status_code == 404  # the worker serves no management API
    assert f"metrics on {base}/metrics" in log.read_text()
