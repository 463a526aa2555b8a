"""`/healthz` (the process answers) and `/readyz` (the database answers at this version's schema,
the scheduler runs when it should) of a real `horarium serve`: no token needed, the Host check
applies, and 503 with an ARM error saying what is not ready."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.migrated_databases import migrated_pg_database
from tests.ops.ops_support import set_schema_revision
from tests.server_fixtures import engine_server as engine_server
from tests.server_process import ServerProcess, running_server
from tests.support import drop_pg_database, wait_until


@pytest.fixture
def server(engine_server: ServerProcess) -> ServerProcess:
    """A server with its scheduler, on each database (one per test: some break it)."""
    return engine_server


def _readyz(server: ServerProcess) -> httpx.Response:
    return httpx.get(server.url("/readyz"), timeout=15)


def test_health_and_readiness_answer_without_a_token(server: ServerProcess) -> None:
    alive = httpx.get(server.url("/healthz"), timeout=10)
    assert (alive.status_code, alive.json()) == (200, {"status": "alive"})
    ready = _readyz(server)
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})


def test_the_host_check_applies_to_the_probes(server: ServerProcess) -> None:
    for path in ("/healthz", "/readyz"):
        refused = httpx.get(server.url(path), headers={"Host": "evil.example"}, timeout=10)
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "InvalidHost"


def _not_ready(server: ServerProcess) -> dict[str, Any] | None:
    answer = _readyz(server)
    if answer.status_code != 503:
        return None
    body: dict[str, Any] = answer.json()["error"]
    return body


def test_a_database_behind_this_versions_schema_is_not_ready(server: ServerProcess) -> None:
    set_schema_revision(server, "0002")
    error = wait_until(lambda: _not_ready(server), "/readyz to answer 503")
    assert error["code"] == "NotReady"
    assert error["details"][0]["code"] == "MigrationsNotApplied"
    assert "0002" in error["message"]
    # At its next heartbeat the scheduler holds its claims back (it runs this version's schema
    # only); the process keeps answering.
    held = wait_until(
        lambda: [
            d for d in (_not_ready(server) or {}).get("details", ()) if d["code"] == "NotClaiming"
        ],
        "/readyz to say the scheduler claims nothing",
    )
    assert "older than this version's" in held[0]["message"]
    assert httpx.get(server.url("/healthz"), timeout=10).status_code == 200


@pytest.mark.postgres
def test_readyz_is_503_when_the_database_is_gone(tmp_path: Path) -> None:
    with migrated_pg_database() as url, running_server(tmp_path, database=url, engine=True) as s:
        assert _readyz(s).status_code == 200
        drop_pg_database(url)
        error = wait_until(lambda: _not_ready(s), "/readyz to answer 503")
        alive = httpx.get(s.url("/healthz"), timeout=10)
        log = s.log()
    assert error["code"] == "NotReady"
    assert [d["code"] for d in error["details"]] == ["DatabaseUnreachable"]
    assert "127.0.0.1" not in error["message"]  # the details go to the log, not to strangers
    assert alive.status_code == 200
    assert "readiness:" in log and "has no database" in log


def _verbose(server: ServerProcess) -> httpx.Response:
    return httpx.get(
        server.url("/readyz"), params={"verbose": ""}, headers=server.auth_headers(), timeout=15
    )


def _beaten(answer: httpx.Response) -> httpx.Response | None:
    """`answer` once it shows this node's heartbeat."""
    return answer if answer.json()["node"]["heartbeatAgeSeconds"] is not None else None


def test_readyz_verbose_keeps_the_503_and_adds_the_nodes_view(server: ServerProcess) -> None:
    set_schema_revision(server, "0002")
    wait_until(lambda: _not_ready(server), "/readyz to answer 503")
    # The node's first beat may come after the process answers: wait for it to show.
    answer = wait_until(lambda: _beaten(_verbose(server)), "the node's first heartbeat")
    assert answer.status_code == 503
    body = answer.json()
    assert body["error"]["details"][0]["code"] == "MigrationsNotApplied"
    node = body["node"]
    assert node["roles"] == ["api", "engine"]
    assert node["databaseReachable"] is True  # it answers, at another schema
    assert node["id"] in [n["id"] for n in node["liveNodes"]]
