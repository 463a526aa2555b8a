"""An upgrade keeps everything: a database that commit 6fea51a (migration 0006) wrote — loaded
from its dump, `tests/upgrade/make_fixture.py` — is migrated by `horarium migrate` (once: a second
run has nothing to do), then served by this version, on SQLite and on PostgreSQL. Its API key
still works; the collection, the calendar, every job and its history read as the old API
answered them (with this version's additions); its counters are the old ones; the execution the
old version left waiting for a retry is retried with its execution tag; and the secrets it sealed
still open: run now (the Disabled one enabled first, which keeps its secret), its jobs send their
credential header and Basic password."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from horarium.store.core.revisions import head_revision
from tests.api.api_client import Api
from tests.http_receiver import Receiver
from tests.ops.ops_support import horarium
from tests.server_process import DATABASES, ServerProcess, running_server
from tests.support import fresh_pg_database, wait_until
from tests.upgrade import old_database
from tests.upgrade.make_fixture import TARGET_HOST, TARGET_PORT
from tests.upgrade.old_database import REVISION, expected

COLLECTION = "legacy"
GROUP = "rg-upgrade"


@dataclass(frozen=True)
class OldDatabase:
    kind: str  # sqlite, postgres
    workdir: Path
    url: str | None  # None: the SQLite file of workdir/data

    @property
    def database_url(self) -> str:
        return self.url or f"sqlite:///{(self.workdir / 'data' / 'horarium.sqlite3').resolve()}"

    def options(self) -> list[str]:
        found = ["--data-dir", str(self.workdir / "data")]
        return found + (["--database", self.url] if self.url else [])


@pytest.fixture(params=DATABASES)
def old(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OldDatabase]:
    """The old version's database and its key, in `tmp_path/data` (SQLite) or a new database."""
    data = tmp_path / "data"
    old_database.write_secret_key(data / "secret.key")
    if request.param == "postgres":
        with fresh_pg_database() as url:
            old_database.load_postgres(url)
            yield OldDatabase("postgres", tmp_path, url)
    else:
        old_database.load_sqlite(data / "horarium.sqlite3")
        yield OldDatabase("sqlite", tmp_path, None)


def _answer(path: str, seen: int) -> int:
    return 500 if path.startswith("/fail") else 200


@pytest.fixture
def target() -> Iterator[Receiver]:
    """The old jobs' target, at the address they were given (their secrets are bound to it)."""
    found = Receiver(_answer, address=(TARGET_HOST, TARGET_PORT))
    yield found
    found.close()


def _subset(old: Any, new: Any, where: str = "") -> None:
    """`new` says everything `old` said (a dict may have gained keys)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), f"{where}: {new!r}"
        for key, value in old.items():
            assert key in new, f"{where}.{key} is gone (now {sorted(new)})"
            _subset(value, new[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), f"{where}: {new!r} (was {old!r})"
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _subset(a, b, f"{where}[{i}]")
    else:
        assert new == old, f"{where}: {new!r} (was {old!r})"


def _migrate(old: OldDatabase) -> str:
    run = horarium("migrate", *old.options())
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.strip()


def _read_everything_as_before(api: Api, seen: dict[str, Any]) -> None:
    calendar = api.get(f"{api.collection(COLLECTION, GROUP)}/calendars/holidays")
    assert calendar.status_code == 200, calendar.text
    assert calendar.json() == seen["calendar"]
    listed = api.get(f"{api.collection(COLLECTION, GROUP)}/jobs").json()["value"]
    assert sorted(j["name"] for j in listed) == sorted(j["name"] for j in seen["jobs"].values())
    for name, job in seen["jobs"].items():
        now = api.get(api.job(COLLECTION, name, GROUP))
        assert now.status_code == 200, now.text
        _subset(job, now.json(), name)
        history = api.get(api.job(COLLECTION, name, GROUP) + "/history").json()["value"]
        _subset(seen["history"][name], history, f"{name}/history")


def _run_now(api: Api, target: Receiver, name: str) -> dict[str, str]:
    # Counted before asking: the engine may deliver the run before the answer reaches the test.
    before = len(target.requests_to(f"/{name}"))
    ran = api.post(api.job(COLLECTION, name, GROUP) + "/run")
    assert ran.status_code == 200, ran.text
    wait_until(lambda: len(target.requests_to(f"/{name}")) > before, f"{name} to run now")
    request = target.requests_to(f"/{name}")[-1]
    return {k.lower(): v for k, v in request["headers"].items()}


def test_an_old_database_is_migrated_and_served_with_everything_kept(
    old: OldDatabase, target: Receiver
) -> None:
    seen = expected()[old.kind]
    assert _migrate(old).endswith(f"from migration {REVISION} to {head_revision()}.")
    assert _migrate(old).endswith(f"is at migration {head_revision()} already: nothing to do.")
    tag = old_database.execution_tag(old.database_url, "retrying")

    with running_server(old.workdir, database=old.url) as server:
        assert server.token is None  # the old first key is kept, no new one is made
        server.token = seen["admin_token"]
        api = Api(server, subscription="sub-upgrade")
        _read_everything_as_before(api, seen)
        _engine_on(server)
        _retried_with_its_tag(api, target, tag)
        secret_call = _run_now(api, target, "secret-call")
        assert secret_call["x-api-key"] == "legacy-header-secret"
        basic = base64.b64encode(b"legacy:legacy-basic-password").decode()
        assert secret_call["authorization"] == f"Basic {basic}"
        enabled = api.patch(
            api.job(COLLECTION, "paused-secret", GROUP), {"properties": {"state": "Enabled"}}
        )
        assert enabled.status_code == 200, enabled.text  # its stored secret kept (same target)
        paused = _run_now(api, target, "paused-secret")
        assert paused["x-functions-key"] == "legacy-functions-key"
        report = api.get(api.job(COLLECTION, "weekday-report", GROUP)).json()
        assert report["properties"]["status"]["nextExecutionTime"] == "2030-01-01T08:00:00Z"
        assert "Traceback" not in server.log()


def _engine_on(server: ServerProcess) -> None:
    token = server.token
    server.engine = True
    server.restart()
    server.token = token


def _retried_with_its_tag(api: Api, target: Receiver, tag: str) -> None:
    """The retry the old version scheduled (30 s after its first attempt, long past) runs at once,
    with the execution's tag, as the second attempt (retryCount 1); the counters go on from the
    old ones (each attempt counts)."""
    path = api.job(COLLECTION, "retrying", GROUP) + "/history"

    def entries() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = api.get(path).json()["value"]
        return found

    wait_until(lambda: len(entries()) == 2, "the old execution's retry")
    assert entries()[0]["properties"]["retryCount"] == 1
    sent = target.requests_to("/fail/retrying")
    assert len(sent) == 1
    headers = {k.lower(): v for k, v in sent[0]["headers"].items()}
    assert headers["x-ms-execution-tag"] == tag
    status = api.get(api.job(COLLECTION, "retrying", GROUP)).json()["properties"]["status"]
    assert (status["executionCount"], status["failureCount"]) == (2, 2)
