"""Helpers for the cluster tests: `horarium worker` processes on one database (a fresh PostgreSQL
one unless told) next to an API-only `horarium serve` (`cluster`), a burst of executions, and
what the sink received per execution tag.

    with cluster(tmp_path, 3, ["--node-timeout", "2"]) as nodes:   # a fresh database
        make_collection(nodes.http)
        nodes.start_workers()
        ...
        assert stop_workers(nodes.workers) == [0, 0, 0]
    assert log_lines(nodes.logs, "deadlock") == []
"""

from __future__ import annotations

import asyncio
import signal
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from tests import forkserver
from tests.engine.live_servers import Recorder, Request
from tests.migrated_databases import migrated_pg_database
from tests.server_process import ServerProcess, running_server, start_worker

API = {"api-version": "2016-03-01"}
COLLECTION = (
    "/subscriptions/sub-c/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/cluster"
)
TAG = "x-ms-execution-tag"
REQUEST_ID = "x-ms-client-request-id"


def stop_workers(workers: Sequence[forkserver.AnyProcess], timeout: float = 30) -> list[int | None]:
    """SIGTERM to every worker, then their exit codes (each waited for up to `timeout` s)."""
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    return [worker.wait(timeout) for worker in workers]


def kill_workers(workers: Sequence[forkserver.AnyProcess]) -> None:
    """SIGKILL to every worker still running, each waited for until it is gone."""
    for worker in workers:
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)


class Cluster:
    """An API-only `horarium serve` on a database, and the workers beside it (one log each)."""

    def __init__(
        self, database: str, api: ServerProcess, logs: list[Path], args: Sequence[str]
    ) -> None:
        self.database = database
        self.api = api
        self.http = httpx.Client(base_url=api.base_url, timeout=60, headers=api.auth_headers())
        self.logs = logs
        self.args = list(args)
        self.workers: list[forkserver.AnyProcess] = []

    def worker(self, slot: int, *own: str) -> forkserver.AnyProcess:
        """Start the worker of `slot` (its log: `logs[slot]`) with the cluster's args and `own`."""
        key = self.api.data_dir / "secret.key"
        return start_worker(self.database, self.logs[slot], [*self.args, *own], key)

    def start_workers(self, *own: Sequence[str]) -> None:
        """Start a worker per log, with the cluster's args and, if given, each one's `own`."""
        each = own or [()] * len(self.logs)
        self.workers = [self.worker(slot, *args) for slot, args in enumerate(each)]


@contextmanager
def cluster(
    tmp_path: Path, workers: int, args: Sequence[str] = (), database: str | None = None
) -> Iterator[Cluster]:
    """A Cluster on `database` or a fresh PostgreSQL one; kills its workers before it ends."""
    with ExitStack() as stack:
        url = database or stack.enter_context(migrated_pg_database())
        api = stack.enter_context(running_server(tmp_path / "api", database=url, engine=False))
        nodes = Cluster(url, api, [tmp_path / f"worker{i}.log" for i in range(workers)], args)
        stack.callback(nodes.http.close)
        stack.callback(lambda: kill_workers(nodes.workers))
        yield nodes


def make_collection(http: httpx.Client, **properties: Any) -> None:
    """PUT the cluster's collection (P20Premium, with `properties`)."""
    body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}, **properties}}
    response = http.put(COLLECTION, params=API, json=body)
    assert response.status_code == 201, response.text


def put_jobs(http: httpx.Client, bodies: dict[str, dict[str, Any]]) -> None:
    """PUT each job (name -> properties), eight at a time."""

    def put(item: tuple[str, dict[str, Any]]) -> None:
        name, properties = item
        response = http.put(
            f"{COLLECTION}/jobs/{name}", params=API, json={"properties": properties}
        )
        assert response.status_code == 201, response.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, bodies.items()))


def run_now(http: httpx.Client, names: Sequence[str]) -> None:
    """POST …/run for each job, eight at a time."""

    def post(name: str) -> None:
        response = http.post(f"{COLLECTION}/jobs/{name}/run", params=API)
        assert response.status_code == 200, response.text

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(post, names))


def http_action(url: str) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": url, "method": "GET"}}


def iso(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _header(request: Request, name: str, default: str = "") -> str:
    """A header the sink received (`name` in lower case), whatever case it was sent in."""
    for key, value in request.headers.items():
        if key.lower() == name:
            return value
    return default


def deliveries(sink: Recorder) -> Counter[str]:
    """How many requests the sink received per execution tag."""
    with sink.lock:
        return Counter(_header(r, TAG) for r in sink.requests)


def repeated_deliveries(sink: Recorder) -> list[str]:
    """Each execution the sink received more than once, with each arrival's time and request id:
    one attempt sent twice (the HTTP client resending a request) shows one request id, an
    execution run twice (by two nodes) two."""
    arrivals: dict[str, list[str]] = {}
    with sink.lock:
        for r in sink.requests:
            arrival = datetime.fromtimestamp(r.at, UTC).strftime("%H:%M:%S.%f")
            arrivals.setdefault(_header(r, TAG), []).append(
                f"{arrival} request {_header(r, REQUEST_ID, '?')}"
            )
    return [f"{tag}: {', '.join(seen)}" for tag, seen in arrivals.items() if len(seen) > 1]


def all_jobs(http: httpx.Client) -> list[dict[str, Any]]:
    """Every job of the collection (following nextLink)."""
    found: list[dict[str, Any]] = []
    page = http.get(f"{COLLECTION}/jobs", params=API).json()
    while True:
        found.extend(page["value"])
        if not page.get("nextLink"):
            return found
        page = http.get(page["nextLink"]).json()


def executions_recorded(http: httpx.Client) -> int:
    """The sum of the jobs' executionCount."""
    return sum(job["properties"]["status"]["executionCount"] for job in all_jobs(http))


def counters_agree_with_history(http: httpx.Client, names: Sequence[str]) -> list[str]:
    """The jobs whose executionCount differs from their history rows (should be none)."""
    wrong = []
    for name in names:
        job = http.get(f"{COLLECTION}/jobs/{name}", params=API).json()
        history = http.get(f"{COLLECTION}/jobs/{name}/history", params=API).json()["value"]
        ran = [h for h in history if h.get("status") != "Postponed"]
        if job["properties"]["status"]["executionCount"] != len(ran):
            wrong.append(name)
    return wrong


def log_lines(logs: Sequence[Path], *needles: str) -> list[str]:
    """The lines of the worker logs that contain any of `needles`."""
    found = []
    for path in logs:
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if any(needle in line for needle in needles):
                    found.append(f"{path.name}: {line}")
    return found


def held_by(database: str, pid: int) -> set[str]:
    """The jobs whose execution the worker of `pid` holds (its owner id is host:pid:random)."""

    async def read() -> set[str]:
        conn = await asyncpg.connect(database)
        try:
            rows = await conn.fetch("SELECT name FROM jobs WHERE lease_owner LIKE $1", f"%:{pid}:%")
            return {row["name"] for row in rows}
        finally:
            await conn.close()

    return asyncio.run(read())


def job_of(sink: Recorder, tag: str) -> str:
    with sink.lock:
        for request in sink.requests:
            if tag in request.headers.values():
                return request.path.lstrip("/")
    return "?"
