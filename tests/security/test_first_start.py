"""First start: `serve` makes one admin key for every subscription and writes its token to
<data-dir>/admin-token (0600), once, also when two processes start together on PostgreSQL."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from tests.security.key_tools import API_VERSION, collection_path, key_rows
from tests.server_process import ServerProcess, running_server
from tests.support import fresh_pg_database


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_first_start_writes_the_admin_token_readable_by_its_owner_only(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path) as server:
        token_file = server.data_dir / "admin-token"
        assert _mode(token_file) == 0o600 and _mode(server.data_dir) == 0o700
        assert server.token and server.token.startswith("hrm_")
        made = [line for line in server.log().splitlines() if "Made the first API key" in line]
        assert len(made) == 1 and str(token_file.resolve()) in made[0]
        # ... and the start-up line says where the token is, on every start while it exists.
        [listening] = [x for x in server.log().splitlines() if "Horarium listening on" in x]
        assert f"(the admin token is in {token_file.resolve()})" in listening
        assert server.token not in server.log()
        [row] = key_rows(server)
        assert (row["name"], row["subscription"], row["role"]) == ("admin", "*", "contributor")
        import httpx

        response = httpx.get(
            server.url(collection_path("any-subscription")),
            params=API_VERSION,
            headers=server.auth_headers(),
        )
        assert response.status_code == 404  # authenticated, nothing there


def test_a_second_start_makes_no_other_key_and_keeps_the_file(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        first = (server.data_dir / "admin-token").read_text()
        server.restart()
        assert (server.data_dir / "admin-token").read_text() == first
        assert len(key_rows(server)) == 1
        log = server.log().splitlines()
        assert sum("Made the first API key" in line for line in log) == 1
        assert sum("Horarium listening on" in line and "admin-token" in line for line in log) == 2


def test_a_deleted_admin_token_file_is_not_made_again_while_keys_exist(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        (server.data_dir / "admin-token").unlink()
        server.restart()
        assert not (server.data_dir / "admin-token").exists()
        assert len(key_rows(server)) == 1


@pytest.mark.postgres
def test_two_servers_starting_together_on_postgresql_make_one_key(tmp_path: Path) -> None:
    with fresh_pg_database() as url:
        servers = [
            ServerProcess(tmp_path / name, database=url, engine=False, env=None, args=[])
            for name in ("one", "two")
        ]
        for server in servers:
            server.workdir.mkdir()
        starts = [threading.Thread(target=server.start) for server in servers]
        try:
            for start in starts:
                start.start()
            for start in starts:
                start.join()
            assert len(key_rows(servers[0])) == 1
            written = [s for s in servers if (s.data_dir / "admin-token").exists()]
            assert len(written) == 1
        finally:
            for server in servers:
                server.stop()
