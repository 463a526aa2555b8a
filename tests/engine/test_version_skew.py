"""Version skew in a cluster: every node records its version and the schema revision its code
knows; `/readyz?verbose` lists them for every node; a node whose database a newer version
migrated while it ran stops claiming and exits with one line (code 2), as a rolling upgrade
expects (docs/operations.md, "Upgrading")."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from horarium import __version__
from horarium.store.core.revisions import head_revision
from tests import forkserver
from tests.ops.ops_support import set_schema_revision
from tests.server_fixtures import engine_server as engine_server
from tests.server_process import ServerProcess, start_worker
from tests.support import wait_until

NEWER = "0099"  # a migration this version does not know


def _pg(url: str, statement: str, *args: Any) -> None:
    async def run() -> None:
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(statement, *args)
        finally:
            await conn.close()

    asyncio.run(run())


def _exit_line(log: str) -> str:
    return [line for line in log.splitlines() if line.strip()][-1]


def _verbose(server: ServerProcess) -> dict[str, Any]:
    answer = httpx.get(
        server.url("/readyz"), params={"verbose": ""}, headers=server.auth_headers(), timeout=15
    )
    node: dict[str, Any] = answer.json()["node"]
    return node


def test_a_node_whose_database_a_newer_version_migrated_stops_with_one_line(
    engine_server: ServerProcess,
) -> None:
    process = engine_server.process
    assert process is not None
    set_schema_revision(engine_server, NEWER)
    code = process.wait(timeout=60)  # within a heartbeat (every --node-timeout / 3)
    log = engine_server.log()
    assert code == 2, log
    assert _exit_line(log) == (
        f"Error: the database's schema is now at migration {NEWER}, newer than this"
        f" Horarium's ({__version__}, migration {head_revision()}): it stops claiming and"
        " exits; start the new version in its place (docs/operations.md, Upgrading)."
    )
    assert "Traceback" not in log


@pytest.mark.postgres
@pytest.mark.parametrize("engine_server", ["postgres"], indirect=True)
def test_every_node_lists_its_version_and_a_worker_left_behind_exits(
    engine_server: ServerProcess, tmp_path: Path
) -> None:
    server, database = engine_server, str(engine_server.database)

    def old_node_beats() -> None:
        """A node of an older release, its row as that release beats it: written again at
        every look, as its heartbeat would (a row left alone is taken over after
        --node-timeout, which a slow worker start on a loaded machine outlasted)."""
        _pg(
            database,
            "INSERT INTO nodes (id, host, pid, started, last_beat, version, schema_revision)"
            " VALUES ('old:1:00000000', 'old', 1, now(), now(), '0.0.9', '0009')"
            " ON CONFLICT (id) DO UPDATE SET last_beat = now()",
        )

    old_node_beats()
    worker_log = tmp_path / "worker.log"
    worker: forkserver.AnyProcess = start_worker(
        database, worker_log, secret_key_file=server.data_dir / "secret.key"
    )
    try:

        def all_three() -> dict[str, Any] | None:
            old_node_beats()
            view = _verbose(server)
            return view if len(view["liveNodes"] or ()) == 3 else None

        view = wait_until(all_three, "the server to see itself, the worker and the older node")
        nodes = {node["id"]: node for node in view["liveNodes"]}
        old = nodes.pop("old:1:00000000")
        assert (old["version"], old["schemaRevision"]) == ("0.0.9", "0009")
        assert old["clockOffsetSeconds"] is None  # it measured nothing
        for node in nodes.values():  # the server and the worker, of this version
            assert (node["version"], node["schemaRevision"]) == (__version__, head_revision())
            assert abs(node["clockOffsetSeconds"]) < 1  # one host: the same clock
        assert view["claiming"] is True and view["notClaimingBecause"] is None

        set_schema_revision(server, NEWER)
        assert worker.wait(timeout=60) == 2
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(15)
    log = worker_log.read_text()
    assert _exit_line(log).startswith(
        f"Error: the database's schema is now at migration {NEWER}, newer than this Horarium's"
    )
    assert "Traceback" not in log
