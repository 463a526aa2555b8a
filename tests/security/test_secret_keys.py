"""The secret key and the files at rest: the key file is created private on first start, in a
private data folder, next to a private SQLite database (whatever the umask); a malformed key, or
a key that cannot open the stored secrets (a job's, a collection's notification secrets), stops
the start with one line; secrets an older
version stored in clear are sealed at start, once."""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, select, update

from horarium.store.core import seal_marks
from horarium.store.core.db import create_engine
from horarium.store.core.schema import engine_marks, jobs
from horarium.store.core.sealing import key_id
from tests.migrated_databases import migrated_pg_database
from tests.security.secret_servers import (
    FAR_FUTURE,
    Api,
    Echo,
    LiveServers,
    database_bytes,
    horarium,
    wait_until,
)
from tests.server_process import ServerProcess, running_server
from tests.support import free_port

PASSWORD = "kept-in-clear-by-an-older-version"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which files are created readable by everyone unless asked."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None: the default SQLite file in the data folder; else a fresh PostgreSQL database."""
    with migrated_pg_database() if request.param == "postgres" else nullcontext(None) as url:
        yield url


def _serve(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """`horarium serve` that is expected to stop at start (its exit code and output)."""
    port = str(free_port())
    return horarium("serve", "--port", port, "--data-dir", str(data_dir), *args, env=env)


def _one_line_error(result: Any) -> str:
    assert result.returncode == 2, result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: ")
    return str(line)


def _key_file(path: Path, *keys: bytes) -> Path:
    path.write_text("".join(base64.b64encode(k).decode() + "\n" for k in keys))
    path.chmod(0o600)
    return path


def _basic_job(url: str) -> dict[str, Any]:
    auth = {"type": "Basic", "username": "u", "password": PASSWORD}
    action = {"type": "Http", "request": {"uri": url, "method": "GET", "authentication": auth}}
    return {"properties": {"action": action, "startTime": FAR_FUTURE}}


def _database_url(server: ServerProcess) -> str:
    return server.database or f"sqlite:///{server.data_dir / 'horarium.sqlite3'}"


def test_first_start_makes_a_private_key_file_folder_and_database(
    tmp_path: Path, umask_022: None
) -> None:
    with running_server(tmp_path) as server:
        api = Api(server)
        api.new_collection()  # a write: the WAL exists
        data = server.data_dir
        key_file = data / "secret.key"
        assert _mode(data) == 0o700
        assert _mode(key_file) == 0o600
        for name in ("horarium.sqlite3", "horarium.sqlite3-wal", "horarium.sqlite3-shm"):
            assert _mode(data / name) == 0o600, name
        api.http.close()
    key = key_file.read_text().strip()
    assert len(base64.b64decode(key)) == 32
    log = server.log()
    [created] = [line for line in log.splitlines() if "secret key" in line]
    assert str(key_file) in created and "key id" in created
    assert key not in log


def test_an_existing_open_data_folder_and_database_are_made_private(
    tmp_path: Path, umask_022: None
) -> None:
    with running_server(tmp_path) as server:
        pass
    data = server.data_dir
    data.chmod(0o755)  # as an older version left them
    (data / "horarium.sqlite3").chmod(0o644)
    with running_server(tmp_path) as server:
        api = Api(server)
        api.new_collection()
        assert _mode(data) == 0o700
        for name in ("horarium.sqlite3", "horarium.sqlite3-wal", "horarium.sqlite3-shm"):
            assert _mode(data / name) == 0o600, name
        api.http.close()
    assert "changed to 0700" in server.log()


@pytest.mark.parametrize(
    "content",
    ["not a key\n", base64.b64encode(b"sixteen bytes!!!").decode(), "", "# only a comment\n"],
)
def test_a_malformed_key_file_stops_the_start_in_one_line(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.key"
    bad.write_text(content)
    line = _one_line_error(_serve(tmp_path / "data", "--secret-key-file", str(bad)))
    assert str(bad) in line


def test_a_missing_key_file_or_malformed_key_variable_stops_the_start(tmp_path: Path) -> None:
    missing = tmp_path / "missing.key"
    line = _one_line_error(_serve(tmp_path / "data", "--secret-key-file", str(missing)))
    assert "does not exist" in line
    result = _serve(tmp_path / "data", env={"HORARIUM_SECRET_KEY": "c2hvcnQ="})
    assert "HORARIUM_SECRET_KEY" in _one_line_error(result)
    assert "c2hvcnQ=" not in result.stderr


def test_a_process_whose_key_cannot_open_the_stored_secrets_says_so_at_start(
    tmp_path: Path, database: str | None
) -> None:
    with running_server(tmp_path / "first", database=database) as server:
        api = Api(server)
        name = api.new_collection()
        created = api.put(api.job(name, "secret"), _basic_job("http://127.0.0.1:9/"))
        assert created.status_code == 201
        api.http.close()
    sealed_by = (server.data_dir / "secret.key").read_text().strip()
    other = _key_file(tmp_path / "other.key", os.urandom(32))
    # The same database: the first one's SQLite file, or the same PostgreSQL database.
    target = ["--database", database] if database else ["--data-dir", str(server.data_dir)]
    for command in ("serve", "worker"):
        port = ["--port", str(free_port())] if command == "serve" else []
        result = horarium(command, *target, "--secret-key-file", str(other), *port)
        line = _one_line_error(result)
        assert "1 jobs" in line and "same key" in line
        assert sealed_by not in result.stderr
    # A key file holding a new key first and the old one after it opens them.
    both = _key_file(tmp_path / "both.key", os.urandom(32), base64.b64decode(sealed_by))
    args = ["--secret-key-file", str(both)]
    with running_server(tmp_path / "first", database=database, args=args) as again:
        api = Api(again, subscription=api.subscription)
        assert api.get(api.job(name, "secret")).status_code == 200
        api.http.close()


def test_notification_secrets_another_key_sealed_stop_the_start_in_the_same_line(
    tmp_path: Path, database: str | None
) -> None:
    with running_server(tmp_path / "first", database=database) as server:
        api = Api(server)
        notification = {"events": ["JobFaulted"], "uri": "http://127.0.0.1:9/n", "secret": "s3"}
        name = api.new_collection(notifications=[notification])
        api.http.close()
    sealed_by = (server.data_dir / "secret.key").read_text().strip()
    sealed_id = key_id(base64.b64decode(sealed_by))
    other = _key_file(tmp_path / "other.key", os.urandom(32))
    target = ["--database", database] if database else ["--data-dir", str(server.data_dir)]
    for command in ("serve", "worker"):
        port = ["--port", str(free_port())] if command == "serve" else []
        result = horarium(command, *target, "--secret-key-file", str(other), *port)
        line = _one_line_error(result)
        assert f"the notification secrets of 1 collections (key id {sealed_id}: 1)" in line
        assert "same key" in line and "jobs" not in line
        assert sealed_by not in result.stderr and "s3" not in result.stderr
    # A key file holding a new key first and the old one after it opens them.
    both = _key_file(tmp_path / "both.key", os.urandom(32), base64.b64decode(sealed_by))
    args = ["--secret-key-file", str(both)]
    with running_server(tmp_path / "first", database=database, args=args) as again:
        api = Api(again, subscription=api.subscription)
        shown = api.get(api.collection(name)).json()["properties"]["notifications"]
        assert shown == [{"events": ["JobFaulted"], "uri": notification["uri"]}]
        api.http.close()


def test_the_key_in_the_environment_wins_over_the_key_file(tmp_path: Path) -> None:
    env_key, file_key = os.urandom(32), os.urandom(32)
    key_file = _key_file(tmp_path / "file.key", file_key)
    env = {"HORARIUM_SECRET_KEY": base64.b64encode(env_key).decode()}
    args = ["--secret-key-file", str(key_file)]
    with running_server(tmp_path, env=env, args=args) as server:
        api = Api(server)
        name = api.new_collection()
        assert (
            api.put(api.job(name, "secret"), _basic_job("http://127.0.0.1:9/")).status_code == 201
        )
        api.http.close()
    # The environment's key sealed: the file's key alone cannot open the secrets.
    _one_line_error(_serve(server.data_dir, *args))


def test_secrets_an_older_version_stored_in_clear_are_sealed_at_start_once(
    tmp_path: Path, database: str | None
) -> None:
    servers = LiveServers()
    echo = Echo()
    url = servers.serve(echo.app())
    try:
        with running_server(tmp_path, database=database, engine=True) as server:
            api = Api(server)
            name = api.new_collection()
            plain = _basic_job(f"{url}/old")
            plain["properties"]["action"]["request"].pop("authentication")
            assert api.put(api.job(name, "old"), plain).status_code == 201
            server.stop()
            stored = _basic_job(f"{url}/old")["properties"]["action"]
            _write_definition(_database_url(server), "old", {"action": stored})
            assert PASSWORD.encode() in database_bytes(_database_url(server))

            server.start()
            assert "sealed the secrets of 1 jobs" in server.log()
            assert PASSWORD.encode() not in database_bytes(_database_url(server))
            assert api.post(api.job(name, "old") + "/run").status_code == 200
            wait_until(lambda: echo.on("/old"), 30, "the job's run")
            expected = "Basic " + base64.b64encode(f"u:{PASSWORD}".encode()).decode()
            assert echo.on("/old")[0].headers["Authorization"] == expected

            server.restart()
            assert server.log().count("sealed the secrets") == 1
            api.http.close()
    finally:
        servers.close()


def _write_definition(url: str, job: str, definition: dict[str, Any]) -> None:
    """Set a job's stored definition as it is given, and leave the store as a version before
    sealing did: such a version wrote secrets in clear and knew no marks of a sealed store."""
    import asyncio

    async def write() -> None:
        engine = create_engine(url)
        try:
            async with engine.begin() as conn:
                found = await conn.execute(select(jobs.c.id).where(jobs.c.key == job))
                await conn.execute(
                    update(jobs)
                    .where(jobs.c.id == found.scalar_one())
                    .values(definition=definition)
                )
                await conn.execute(
                    delete(engine_marks).where(engine_marks.c.name.startswith(seal_marks.PREFIX))
                )
        finally:
            await engine.dispose()

    asyncio.run(write())


@pytest.mark.postgres
def test_a_job_sealed_by_another_process_key_is_shown_masked_and_not_run(tmp_path: Path) -> None:
    """Two processes started on an empty database with different keys (the mistake the start
    check cannot see yet): the one without the key shows the job masked, refuses to keep its
    secrets, and runs nothing for it."""
    servers = LiveServers()
    echo = Echo()
    url = servers.serve(echo.app())
    try:
        with (
            migrated_pg_database() as database,
            running_server(tmp_path / "a", database=database) as first,
            running_server(tmp_path / "b", database=database, engine=True) as second,
        ):
            second.token = first.token  # one database, one admin key (made by the first)
            writer, reader = Api(first), Api(second)
            reader.subscription = writer.subscription
            name = writer.new_collection()
            path = writer.job(name, "theirs")
            assert writer.put(path, _basic_job(f"{url}/theirs")).status_code == 201
            shown = reader.get(path)
            assert shown.status_code == 200
            assert PASSWORD not in shown.text
            patched = reader.patch(path, {"properties": {"action": {"request": {"body": "x"}}}})
            assert patched.status_code == 409, patched.text
            assert patched.json()["error"]["code"] == "SecretsUnreadable"
            assert reader.post(path + "/run").status_code == 200
            history = wait_until(lambda: reader.get(path + "/history").json()["value"], 30, "run")
            message = history[0]["properties"]["message"]
            assert "cannot be read by this process" in message and "nothing was run" in message
            assert echo.on("/theirs") == []
            writer.http.close()
            reader.http.close()
    finally:
        servers.close()
