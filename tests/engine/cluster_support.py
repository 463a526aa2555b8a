"""Helpers for the cluster tests: `horarium worker` processes on one PostgreSQL database next to
an API-only `horarium serve`, a burst of executions, and what the sink received per execution
tag."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from tests.engine.live_servers import Recorder

API = {"api-version": "2016-03-01"}
COLLECTION = (
    "/subscriptions/sub-c/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/cluster"
)
TAG = "x-ms-execution-tag"


def start_worker(
    database: str, log: Path, key_file: Path, args: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """A worker on the database with the API process's secret key; its output goes to `log`
    (appended, so a restarted worker adds to it)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "horarium.cli",
                "worker",
                "--database",
                database,
                "--secret-key-file",
                str(key_file),
                *args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def make_collection(http: httpx.Client) -> None:
    body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
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


def deliveries(sink: Recorder) -> Counter[str]:
    """How many requests the sink received per execution tag."""
    with sink.lock:
        return Counter(r.headers.get(TAG, r.headers.get(TAG.title(), "")) for r in sink.requests)


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
