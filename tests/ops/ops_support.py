"""Helpers of the operations tests: an HTTP target on 127.0.0.1, a client that makes jobs through
a running server's API, `horarium keys` and `horarium worker` against its database, and the
server's metrics and JSON log lines read back."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from tests import forkserver
from tests.server_process import LOOPBACK_ONLY, ServerProcess, database_url

API = {"api-version": "2016-03-01"}


class Target:
    """An HTTP server on 127.0.0.1: `/ok…` answers 200, `/fail…` 500; it counts the hits."""

    def __init__(self) -> None:
        hits: list[str] = []
        self.hits = hits

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                hits.append(self.path)
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                status = 500 if self.path.startswith("/fail") else 200
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def http_target() -> Iterator[Target]:
    target = Target()
    try:
        yield target
    finally:
        target.close()


class Jobs:
    """Makes a collection and jobs through the server's API (its own subscription)."""

    def __init__(self, server: ServerProcess, token: str | None = None) -> None:
        self.subscription = f"sub-ops-{uuid.uuid4().hex[:8]}"
        self.collection_name = f"jc-{uuid.uuid4().hex[:6]}"
        self.collection = (
            f"/subscriptions/{self.subscription}/resourceGroups/rg-ops"
            f"/providers/Microsoft.Scheduler/jobCollections/{self.collection_name}"
        )
        headers = {"Authorization": f"Bearer {token}"} if token else server.auth_headers()
        self.http = httpx.Client(base_url=server.base_url, timeout=30, headers=headers)
        body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
        made = self.http.put(self.collection, params=API, json=body)
        assert made.status_code in (200, 201), made.text

    def put(self, name: str, uri: str, retry: dict[str, Any] | None = None) -> None:
        """A one-time job without `startTime`: it runs at once."""
        action: dict[str, Any] = {
            "type": "Http",
            "request": {"uri": uri, "method": "POST", "body": "tick"},
            "retryPolicy": retry or {"retryType": "None"},
        }
        made = self.http.put(
            f"{self.collection}/jobs/{name}", params=API, json={"properties": {"action": action}}
        )
        assert made.status_code in (200, 201), made.text

    def history(self, name: str) -> list[dict[str, Any]]:
        found = self.http.get(f"{self.collection}/jobs/{name}/history", params=API)
        assert found.status_code == 200, found.text
        return [entry["properties"] for entry in found.json()["value"]]

    def close(self) -> None:
        self.http.close()


def new_key(server: ServerProcess, subscription: str, role: str = "reader") -> str:
    """`horarium keys create` on the server's database; the new token."""
    command = [sys.executable, "-m", "horarium.cli", "keys", "create"]
    command += ["--subscription", subscription, "--role", role]
    command += ["--data-dir", str(server.data_dir), "--database", database_url(server)]
    made = forkserver.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def set_schema_revision(server: ServerProcess, revision: str) -> None:
    """Write `revision` as the migration the server's database is at (what a newer version's
    migration, or a restored older backup, leaves)."""
    url = database_url(server)
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///"), timeout=10) as conn:
            conn.execute("UPDATE alembic_version SET version_num = ?", (revision,))
        return

    async def update() -> None:
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            await conn.execute("UPDATE alembic_version SET version_num = $1", revision)
        finally:
            await conn.close()

    asyncio.run(update())


def one_line_error(run: subprocess.CompletedProcess[str]) -> str:
    """The one `Error: …` line of a command that stopped on a mistake: exit code 2, nothing on
    stdout, no traceback."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert run.stdout.strip() == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), run.stderr
    return lines[0]


def horarium(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`horarium …` to its end (stdout and stderr kept apart)."""
    return forkserver.run(
        [sys.executable, "-m", "horarium.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **LOOPBACK_ONLY, **(env or {})},
    )


def samples(text: str) -> list[Sample]:
    """Every sample of a Prometheus text exposition."""
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(found: list[Sample], name: str, **labels: str) -> float:
    """The sum of the samples called `name` whose labels include `labels` (0: none)."""
    return sum(
        s.value
        for s in found
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def json_lines(log: str) -> list[dict[str, Any]]:
    """Every line of a JSON log, parsed (a line that is not one JSON object fails the test)."""
    lines = []
    for line in log.splitlines():
        if line.strip():
            entry = json.loads(line)
            assert isinstance(entry, dict), line
            lines.append(entry)
    return lines
