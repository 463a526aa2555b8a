"""Makes the fixtures of `test_upgrade.py`: a database written by an earlier Horarium.

    python -m tests.upgrade.make_fixture           # from the repository's root, PostgreSQL up

It takes the source of commit `COMMIT` out of git (`git archive`), runs that revision's
`horarium serve` (scheduler on) once on a SQLite file and once on a fresh PostgreSQL database,
and drives its API: a collection, an exclusion calendar, jobs with secrets (a credential header,
a Basic password), a one-time job that succeeded, one that faulted, one waiting for a retry, a
recurring series that ran to its end, a Disabled one and one in the future; the service is
stopped while the retry waits. The jobs' targets
are `TARGET` (a loopback address of its own, on a fixed port outside the ephemeral range), so
that the test can answer there again: sealed secrets are bound to their target's origin. Once
the old service has recorded everything it is stopped, and this writes to `fixtures/`:

- `<commit>.sqlite.sql`: the SQLite file dumped as SQL (`sqlite3` `iterdump`, the old
  migrations' schema and the rows as the old code wrote them);
- `<commit>.postgres.sql`: the PostgreSQL database (`pg_dump --inserts`, plain SQL);
- `<commit>.secret.key`: the secret key both runs sealed with (a test key, made for this
  fixture);
- `<commit>.expected.json`: by database, the first API key's token (a test token) and what the
  old API answered for every job, its history and the calendar; and the requests the target
  received.

The fixture is made once and checked in; run this again only to add another revision.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from tests.support import free_port, fresh_pg_database, wait_until

COMMIT = "6fea51a"  # "Merge cal13": the last commit whose newest migration is 0006
TARGET_HOST = "127.84.19.6"
TARGET_PORT = 29417
TARGET = f"http://{TARGET_HOST}:{TARGET_PORT}"
SUBSCRIPTION = "sub-upgrade"
COLLECTION = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-upgrade"
    "/providers/Microsoft.Scheduler/jobCollections/legacy"
)
API = {"api-version": "2016-03-01"}
FIXTURES = Path(__file__).with_name("fixtures")
REPO = Path(__file__).resolve().parents[2]

# The jobs, as the old API was given them.
JOBS: dict[str, dict[str, Any]] = {
    "secret-call": {
        "action": {
            "type": "Http",
            "request": {
                "uri": f"{TARGET}/secret-call",
                "method": "POST",
                "body": "legacy",
                "headers": {"x-api-key": "legacy-header-secret"},
                "authentication": {
                    "type": "Basic",
                    "username": "legacy",
                    "password": "legacy-basic-password",
                },
            },
            "retryPolicy": {"retryType": "None"},
        }
    },
    "failing": {
        "action": {
            "type": "Http",
            "request": {"uri": f"{TARGET}/fail/failing", "method": "POST"},
            "retryPolicy": {"retryType": "None"},
        }
    },
    "twice": {
        "action": {
            "type": "Http",
            "request": {"uri": f"{TARGET}/twice", "method": "POST"},
            "retryPolicy": {"retryType": "None"},
        },
        "recurrence": {"frequency": "Minute", "interval": 1, "count": 2},
    },
    "paused-secret": {
        "state": "Disabled",
        "action": {
            "type": "Http",
            "request": {
                "uri": f"{TARGET}/paused-secret",
                "method": "POST",
                "headers": {"x-functions-key": "legacy-functions-key"},
            },
        },
        "recurrence": {"frequency": "Hour", "interval": 1},
    },
    "weekday-report": {
        "startTime": "2030-01-01T00:00:00Z",
        "action": {
            "type": "Http",
            "request": {"uri": f"{TARGET}/report", "method": "GET"},
        },
        "recurrence": {
            "frequency": "Week",
            "schedule": {
                "weekDays": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
                "hours": [9],
                "minutes": [0],
            },
            "timeZone": "Europe/Paris",
            "excludeCalendars": ["holidays"],
        },
    },
}
# Made last, once the others are done: the service is stopped right after its first attempt, so
# that its retry (30 s later) is left waiting in the database.
JOBS["retrying"] = {
    "action": {
        "type": "Http",
        "request": {"uri": f"{TARGET}/fail/retrying", "method": "POST"},
        "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 3},
    }
}
CALENDAR = {"dates": ["2030-12-25", "2031-01-01"], "weekends": True}


class _Target:
    """The jobs' target: `/fail…` answers 500, anything else 200; it keeps every request."""

    def __init__(self) -> None:
        received: list[dict[str, Any]] = []
        self.received = received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                received.append({"path": self.path, "headers": dict(self.headers)})
                self.send_response(500 if self.path.startswith("/fail") else 200)
                self.send_header("content-length", "0")
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((TARGET_HOST, TARGET_PORT), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def _old_source() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=f"horarium-{COMMIT}-") as folder:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", COMMIT], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", folder], input=archive.stdout, check=True)
        yield Path(folder) / "src"


@contextmanager
def _old_serve(source: Path, data: Path, database: str | None) -> Iterator[httpx.Client]:
    port = free_port()
    command = [sys.executable, "-m", "horarium.cli", "serve", "--port", str(port)]
    command += ["--data-dir", str(data), "--engine", "--poll-interval", "0.2"]
    if database:
        command += ["--database", database]
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONUNBUFFERED": "1"}
    log_path = Path(tempfile.gettempdir()) / f"horarium-{COMMIT}-{data.name}.log"
    log = log_path.open("wb")  # kept: it says what went wrong when a wait gives up
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(base), "the old serve to answer")
        token = (data / "admin-token").read_text().strip()
        with httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            yield client
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        log.close()


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _drive(client: httpx.Client) -> dict[str, Any]:
    """Make everything, wait until the old engine has done what it will, read it back."""
    made = client.put(COLLECTION, params=API, json={"location": "westus", "properties": {
        "sku": {"name": "Standard"}}})  # fmt: skip
    assert made.status_code in (200, 201), made.text
    made = client.put(f"{COLLECTION}/calendars/holidays", params=API, json={
        "properties": CALENDAR})  # fmt: skip
    assert made.status_code in (200, 201), made.text

    def put(name: str) -> None:
        made = client.put(f"{COLLECTION}/jobs/{name}", params=API, json={
            "properties": JOBS[name]})  # fmt: skip
        assert made.status_code in (200, 201), made.text

    def state(name: str) -> Any:
        found = client.get(f"{COLLECTION}/jobs/{name}", params=API).json()
        return str(found["properties"]["state"]).lower()

    def entries(name: str) -> list[Any]:
        found = client.get(f"{COLLECTION}/jobs/{name}/history", params=API).json()
        return list(found["value"])

    for name in JOBS:
        if name != "retrying":
            put(name)
    wait_until(lambda: state("secret-call") == "completed", "secret-call to complete", 120)
    wait_until(lambda: state("failing") == "faulted", "failing to fault", 120)
    wait_until(lambda: state("twice") == "completed", "twice to complete", 180)
    put("retrying")
    wait_until(lambda: len(entries("retrying")) == 1, "retrying's first attempt", 20)
    jobs = {name: client.get(f"{COLLECTION}/jobs/{name}", params=API).json() for name in JOBS}
    history = {name: entries(name) for name in JOBS}
    calendar = client.get(f"{COLLECTION}/calendars/holidays", params=API).json()
    return {"jobs": jobs, "history": history, "calendar": calendar}


def _sqlite(source: Path, work: Path) -> tuple[dict[str, Any], str]:
    data = work / "sqlite"
    with _old_serve(source, data, None) as client:
        seen = _drive(client)
    seen["admin_token"] = (data / "admin-token").read_text().strip()
    connection = sqlite3.connect(data / "horarium.sqlite3")
    try:
        dump = "\n".join(connection.iterdump()) + "\n"
    finally:
        connection.close()
    _keep_secrets(data)
    return seen, dump


def _postgres(source: Path, work: Path) -> tuple[dict[str, Any], str]:
    data = work / "postgres"
    data.mkdir(mode=0o700)
    (data / "secret.key").write_text((FIXTURES / f"{COMMIT}.secret.key").read_text())
    (data / "secret.key").chmod(0o600)
    with fresh_pg_database() as url:
        with _old_serve(source, data, url) as client:
            seen = _drive(client)
        seen["admin_token"] = (data / "admin-token").read_text().strip()
        dumped = subprocess.run(
            ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--dbname", url],
            check=True,
            capture_output=True,
        )
    # Bytes, not text mode: the values hold carriage returns (HTTP headers in history messages).
    return seen, dumped.stdout.decode("utf-8")


def _keep_secrets(data: Path) -> None:
    (FIXTURES / f"{COMMIT}.secret.key").write_text((data / "secret.key").read_text())


def main() -> None:
    FIXTURES.mkdir(exist_ok=True)
    target = _Target()
    try:
        with _old_source() as source, tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            sqlite_seen, sqlite_dump = _sqlite(source, work)
            postgres_seen, postgres_dump = _postgres(source, work)  # with the same key
    finally:
        target.close()
    for kind, dump in (("sqlite", sqlite_dump), ("postgres", postgres_dump)):
        with open(FIXTURES / f"{COMMIT}.{kind}.sql", "w", encoding="utf-8", newline="") as out:
            out.write(dump)
    expected = {
        "commit": COMMIT,
        "revision": "0006",
        "target": TARGET,
        "jobs_given": JOBS,
        "sqlite": sqlite_seen,
        "postgres": postgres_seen,
        "received": [{"path": r["path"], "headers": r["headers"]} for r in target.received],
    }
    (FIXTURES / f"{COMMIT}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
