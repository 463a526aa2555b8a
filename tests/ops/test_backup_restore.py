"""A backup taken in the middle of a burst of executions, restored into a new data folder (SQLite)
or a new database (PostgreSQL: the `pg_dump` and `pg_restore` commands `horarium backup` and
`horarium restore` print, run as printed), and served: every job made before the backup, the
calendar, the API keys and the secret key are there, and the secrets still open; the history up
to the backup is there as it was; and what ran after the backup point runs at most once more,
with its execution tag — exactly once for a job whose execution the backup holds as not yet
recorded, never for one the backup holds as done."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from horarium.store.core.db import create_engine
from horarium.store.core.schema import job_history, jobs
from tests import forkserver
from tests.api.api_client import Api
from tests.http_receiver import Receiver
from tests.ops.ops_support import horarium, new_key
from tests.server_process import DATABASES, ServerProcess, running_server, serving
from tests.support import fresh_pg_database, wait_until

# One-time jobs made one after another, each PACE seconds after the one before and due START_IN
# after it is made, from before the backup starts until after it has ended: so the backup holds
# jobs that ran, and jobs made but not yet run (or running).
PACE = 0.1
START_IN = timedelta(seconds=1)
BACKUP_AFTER = 30  # the backup starts once this many are made (3 s: the first ones have run)
AFTER_BACKUP = 10  # and the burst goes on for this many more once it has ended
MOST = 400  # a bound on the burst, whatever happens
SECRET = "burst-secret-value"
CALENDAR = {"dates": ["2031-12-25"], "weekends": True}


def _job(receiver: Receiver, path: str, start: datetime | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "action": {
            "type": "Http",
            "request": {
                "uri": f"{receiver.base_url}{path}",
                "method": "POST",
                "headers": {"x-api-key": SECRET},
            },
            "retryPolicy": {"retryType": "None"},
        }
    }
    if start is not None:
        properties["startTime"] = start.isoformat().replace("+00:00", "Z")
    else:  # kept for a run-now: hourly from 2030
        properties["startTime"] = "2030-01-01T00:00:00Z"
        properties["recurrence"] = {"frequency": "Hour", "interval": 1}
    return {"properties": properties}


class Burst:
    """Makes the burst's jobs on a thread until stopped; `made` lists those whose PUT answered."""

    def __init__(self, server: ServerProcess, api: Api, collection: str, receiver: Receiver):
        self.made: list[str] = []
        self.errors: list[str] = []
        self._api = api
        self._collection = collection
        self._client = httpx.Client(base_url=server.base_url, headers=server.auth_headers())
        self._receiver = receiver
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        for i in range(MOST):
            if self._stop.wait(PACE):
                return
            name = f"b{i:03d}"
            body = _job(self._receiver, f"/burst/{name}", datetime.now(UTC) + START_IN)
            path = self._api.job(self._collection, name)
            made = self._client.put(path, params={"api-version": "2016-03-01"}, json=body)
            if made.status_code != 201:
                self.errors.append(made.text)
            self.made.append(name)

    @contextmanager
    def running(self) -> Iterator[Burst]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(timeout=60)
            self._client.close()


def _ok(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def _printed_command(said: str, program: str) -> list[str]:
    lines = [line.strip() for line in said.splitlines() if line.strip().startswith(program)]
    assert len(lines) == 1, said
    return shlex.split(lines[0])


def _run_printed(said: str, program: str) -> None:
    run = forkserver.run(
        _printed_command(said, program), capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr


def _backup(server: ServerProcess, dest: Path) -> None:
    """`horarium backup --include-key` of the running server's database (and, on PostgreSQL,
    the `pg_dump` it prints, run at once)."""
    args = ["backup", str(dest), "--include-key", "--data-dir", str(server.data_dir)]
    if server.database:
        args += ["--database", server.database]
    said = _ok(horarium(*args))
    if server.database:
        _run_printed(said, "pg_dump")


def _restore(src: Path, data: Path, database: str | None) -> None:
    args = ["restore", str(src), "--data-dir", str(data)]
    if database:
        args += ["--database", database]
    said = _ok(horarium(*args))
    assert f"the secret key into {data / 'secret.key'}" in said
    if database:
        _run_printed(said, "pg_restore")


def _held_history(database_url: str) -> dict[str, list[str]]:
    """The execution tags of each burst job's history, read from a database (not served yet)."""

    async def read() -> dict[str, list[str]]:
        db = create_engine(database_url)
        try:
            async with db.connect() as conn:
                rows = await conn.execute(
                    select(jobs.c.name, job_history.c.execution_tag)
                    .join(job_history)
                    .order_by(job_history.c.id)
                )
                found: dict[str, list[str]] = {}
                for name, tag in rows:
                    found.setdefault(name, []).append(tag)
                return found
        finally:
            await db.dispose()

    return asyncio.run(read())


def _deliveries(received: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The execution tags each burst job's target received, in order."""
    found: dict[str, list[str]] = {}
    for request in received:
        if request["path"].startswith("/burst/"):
            headers = {k.lower(): v for k, v in request["headers"].items()}
            assert headers["x-api-key"] == SECRET
            found.setdefault(request["path"].removeprefix("/burst/"), []).append(
                headers["x-ms-execution-tag"]
            )
    return found


def _names(api: Api, collection: str) -> set[str]:
    listed = api.get(api.collection(collection) + "/jobs")
    assert listed.status_code == 200, listed.text
    return {job["name"].split("/")[-1] for job in listed.json()["value"]}


def _state(api: Api, collection: str, name: str) -> str:
    return str(api.get(api.job(collection, name)).json()["properties"]["state"]).lower()


@pytest.fixture(params=DATABASES)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_backup_in_a_burst_restores_everything_up_to_it(kind: str, tmp_path: Path) -> None:
    receiver = Receiver()
    backup = tmp_path / "backup"
    with serving(kind, tmp_path / "before", engine=True) as server:
        api = Api(server, subscription=f"sub-backup-{uuid.uuid4().hex[:6]}")
        collection = api.new_collection(sku="P20Premium")
        calendar = api.collection(collection) + "/calendars/holidays"
        assert api.put(calendar, {"properties": CALENDAR}).status_code == 201
        assert api.put(api.job(collection, "keeper"), _job(receiver, "/keeper")).status_code == 201
        reader = new_key(server, api.subscription)
        admin = server.token
        with Burst(server, api, collection, receiver).running() as burst:
            wait_until(lambda: len(burst.made) >= BACKUP_AFTER, "the burst's first jobs")
            made_before = set(burst.made)
            _backup(server, backup)
            ended = len(burst.made)
            wait_until(lambda: len(burst.made) >= ended + AFTER_BACKUP, "the burst to go on")
        assert not burst.errors, burst.errors
        made = sorted(burst.made)
        wait_until(lambda: len(_deliveries(receiver.received)) == len(made), "the burst to run")
        wait_until(
            lambda: all(_state(api, collection, name) == "completed" for name in made),
            "every burst job to be recorded",
        )
        before = _deliveries(receiver.received)
        original_key = (server.data_dir / "secret.key").read_text()
    after = tmp_path / "after"
    with _restored_database(kind) as url:
        _restore(backup, after / "data", url)
        assert (after / "data" / "secret.key").read_text() == original_key
        held = _held_history(url or f"sqlite:///{after / 'data' / 'horarium.sqlite3'}")
        cut = len(receiver.received)
        with running_server(after, database=url, engine=True) as restored:
            restored.token = admin
            api = Api(restored, subscription=api.subscription)
            names = _names(api, collection)
            assert made_before | {"keeper"} <= names <= {*made, "keeper"}
            assert set(made) - names, "the backup holds none of the jobs made after it"
            assert api.get(calendar).json()["properties"] == CALENDAR
            with httpx.Client(base_url=restored.base_url) as as_reader:
                read = as_reader.get(
                    api.collection(collection),
                    params={"api-version": "2016-03-01"},
                    headers={"Authorization": f"Bearer {reader}"},
                )
                assert read.status_code == 200, read.text
            _secrets_open(api, collection, receiver)
            burst_names = sorted(names - {"keeper"})
            wait_until(
                lambda: all(_state(api, collection, n) == "completed" for n in burst_names),
                "the restored burst jobs to complete",
                120,
            )
            again = _deliveries(receiver.received[cut:])
            _history_up_to_the_backup_kept(api, collection, held, burst_names)
            assert "Traceback" not in restored.log()
    _at_most_once_more(burst_names, held, before, again)


@contextmanager
def _restored_database(kind: str) -> Iterator[str | None]:
    """A new, empty database to restore into (None: the SQLite file of the new data folder)."""
    if kind == "postgres":
        with fresh_pg_database() as url:
            yield url
    else:
        yield None


def _secrets_open(api: Api, collection: str, receiver: Receiver) -> None:
    """The keeper job, run now on the restored service, sends its sealed header."""
    ran = api.post(api.job(collection, "keeper") + "/run")
    assert ran.status_code == 200, ran.text
    wait_until(lambda: receiver.requests_to("/keeper"), "the keeper job to run now")
    headers = {k.lower(): v for k, v in receiver.requests_to("/keeper")[0]["headers"].items()}
    assert headers["x-api-key"] == SECRET


def _history_up_to_the_backup_kept(
    api: Api, collection: str, held: dict[str, list[str]], names: list[str]
) -> None:
    """A job the backup holds as run has exactly its one entry; every restored job has one."""
    for name in names:
        entries = api.get(api.job(collection, name) + "/history").json()["value"]
        assert len(entries) == 1, (name, entries)
        assert len(held.get(name, [])) <= 1


def _at_most_once_more(
    names: list[str],
    held: dict[str, list[str]],
    before: dict[str, list[str]],
    again: dict[str, list[str]],
) -> None:
    """Before the restore every job ran once. After it, a job the backup holds as recorded does
    not run again; one it holds as not yet recorded (made, due, or running at the backup) runs
    exactly once more, with the tag of its first run."""
    assert all(len(tags) == 1 for tags in before.values()), before
    ran_again = Counter({name: len(tags) for name, tags in again.items()})
    for name in names:
        if name in held:
            assert ran_again[name] == 0, (name, held[name], again.get(name))
            assert held[name] == before[name]
        else:
            assert ran_again[name] == 1, (name, again.get(name))
            assert again[name] == before[name]
    assert set(again) <= set(names)
    assert any(name in held for name in names), "the backup holds no job that had run"
    assert any(name not in held for name in names), "the backup holds no job still to run"
