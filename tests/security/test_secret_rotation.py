"""`horarium secrets rotate`: every stored secret sealed again under a new key, end to end on
SQLite and PostgreSQL, following the procedures of docs/security.md ("Rotating the key")."""

from __future__ import annotations

import asyncio
import base64
import os
import stat
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from horarium import cli
from horarium.store.core.db import create_engine
from horarium.store.core.schema import job_collections, jobs
from horarium.store.core.sealing import Keyring, key_id, open_notification_secret, sealed_key_id
from tests.security.secret_servers import (
    FAR_FUTURE,
    Api,
    Echo,
    LiveServers,
    database_bytes,
    horarium,
    wait_until,
)
from tests.server_process import ServerProcess, database_url, running_server
from tests.support import free_port, fresh_pg_database

PASSWORD = "rotated-password"


@dataclass
class Setup:
    root: Path
    database: str | None
    echo: Echo
    url: str

    def key_file(self, name: str, *keys: bytes) -> Path:
        path = self.root / name
        path.write_text("".join(base64.b64encode(k).decode() + "\n" for k in keys))
        path.chmod(0o600)
        return path

    def serve(self, key_file: Path) -> Any:
        return running_server(
            self.root / "service",
            database=self.database,
            engine=True,
            # --smtp-url: a collection may hold an email channel (no secret; nothing is sent)
            args=["--secret-key-file", str(key_file), "--smtp-url", "smtp://127.0.0.1:9"],
        )

    def target(self, server: ServerProcess) -> list[str]:
        """The options that name the service's database to `horarium secrets rotate`."""
        return (
            ["--database", self.database] if self.database else ["--data-dir", str(server.data_dir)]
        )

    def sealed_by(self, server: ServerProcess) -> set[str | None]:
        """The ids of the keys that sealed the stored jobs' secrets."""
        return asyncio.run(_sealed_by(database_url(server)))


async def _sealed_by(url: str) -> set[str | None]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(select(jobs.c.definition))
            return {sealed_key_id(row.definition) for row in rows}
    finally:
        await engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Setup]:
    servers = LiveServers()
    echo = Echo()
    try:
        with fresh_pg_database() if request.param == "postgres" else nullcontext(None) as db:
            yield Setup(tmp_path, db, echo, servers.serve(echo.app()))
    finally:
        servers.close()


def _create_job(api: Api, url: str) -> str:
    name = api.new_collection()
    auth = {"type": "Basic", "username": "u", "password": PASSWORD}
    action = {"type": "Http", "request": {"uri": url, "method": "GET", "authentication": auth}}
    response = api.put(
        api.job(name, "rotating"), {"properties": {"action": action, "startTime": FAR_FUTURE}}
    )
    assert response.status_code == 201, response.text
    return name


def _runs_with_the_password(setup: Setup, api: Api, collection: str) -> None:
    before = len(setup.echo.on("/rotating"))
    assert api.post(api.job(collection, "rotating") + "/run").status_code == 200
    wait_until(lambda: len(setup.echo.on("/rotating")) > before, 30, "the job's run")
    expected = "Basic " + base64.b64encode(f"u:{PASSWORD}".encode()).decode()
    assert setup.echo.on("/rotating")[-1].headers["Authorization"] == expected


def test_rotation_while_the_services_hold_both_keys(setup: Setup) -> None:
    old, new = os.urandom(32), os.urandom(32)
    key_file = setup.key_file("secret.key", old)
    with setup.serve(key_file) as server:
        api = Api(server)
        collection = _create_job(api, f"{setup.url}/rotating")
    # The new key first, the old one after it: services seal with the new one, open both.
    setup.key_file("secret.key.next", new, old).replace(key_file)
    with setup.serve(key_file) as server:
        api = Api(server, subscription=api.subscription)
        rotated = horarium(
            "secrets", "rotate", *setup.target(server),
            "--secret-key-file", str(key_file), "--new-key-file", str(key_file),
        )  # fmt: skip
        assert rotated.returncode == 0, rotated.stderr
        assert f"1 jobs again under key id {key_id(new)}" in rotated.stderr
        _runs_with_the_password(setup, api, collection)  # the running service did not break
        assert setup.sealed_by(server) == {key_id(new)}
    # The old key dropped.
    setup.key_file("secret.key.next", new).replace(key_file)
    with setup.serve(key_file) as server:
        api = Api(server, subscription=api.subscription)
        _runs_with_the_password(setup, api, collection)
        again = horarium(
            "secrets", "rotate", *setup.target(server),
            "--secret-key-file", str(key_file), "--new-key-file", str(key_file),
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert "0 jobs again" in again.stderr and "1 already were" in again.stderr
        api.http.close()


def test_rotation_to_a_new_key_file_it_creates(setup: Setup) -> None:
    old_file = setup.key_file("old.key", os.urandom(32))
    new_file = setup.root / "new.key"
    with setup.serve(old_file) as server:
        api = Api(server)
        collection = _create_job(api, f"{setup.url}/rotating")
    rotated = horarium(
        "secrets", "rotate", *setup.target(server),
        "--secret-key-file", str(old_file), "--new-key-file", str(new_file),
    )  # fmt: skip
    assert rotated.returncode == 0, rotated.stderr
    assert stat.S_IMODE(new_file.stat().st_mode) == 0o600
    assert f"created the key file {new_file}" in rotated.stderr
    [new_key] = new_file.read_text().split()
    assert setup.sealed_by(server) == {key_id(base64.b64decode(new_key))}
    # Nothing the old key sealed is left in the files.
    old_id = key_id(base64.b64decode(old_file.read_text()))
    assert old_id.encode() not in database_bytes(database_url(server))
    with setup.serve(new_file) as server:
        api = Api(server, subscription=api.subscription)
        _runs_with_the_password(setup, api, collection)
        api.http.close()
    refused = horarium(
        "serve", *setup.target(server), "--secret-key-file", str(old_file),
        "--port", str(free_port()),
    )  # fmt: skip
    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_rotation_without_a_current_key_says_so(tmp_path: Path) -> None:
    result = horarium(
        "secrets", "rotate", "--data-dir", str(tmp_path), "--new-key-file", str(tmp_path / "n")
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"Error: secret key file {tmp_path / 'secret.key'} does not exist: there is no key to"
        " rotate from"
    ]
    assert not (tmp_path / "n").exists()


def test_rotate_takes_the_database_and_key_options_of_serve() -> None:
    text = CliRunner().invoke(cli.main, ["secrets", "rotate", "--help"], terminal_width=200).output
    for option, variable in (
        ("--database", "HORARIUM_DATABASE"),
        ("--data-dir", "HORARIUM_DATA_DIR"),
        ("--secret-key-file", "HORARIUM_SECRET_KEY_FILE"),
        ("--secret-key", "HORARIUM_SECRET_KEY"),
    ):
        assert option in text and variable in text
    assert "--port" not in text and "--http-timeout" not in text


NOTIFY_SECRET = "rotated-notification-secret"
ROUTING_KEY = "pagerduty-routing-key-to-rotate"


async def _notification_secrets(url: str) -> list[dict[str, Any]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(select(job_collections.c.document))
            return [n for row in rows for n in (row.document or {}).get("notifications", [])]
    finally:
        await engine.dispose()


def test_rotation_seals_the_notification_secrets_again(setup: Setup) -> None:
    old_file = setup.key_file("old.key", os.urandom(32))
    new_file = setup.root / "new.key"
    with setup.serve(old_file) as server:
        api = Api(server)
        name = "notifying"
        notification = {"events": ["JobFaulted"], "uri": setup.url + "/n", "secret": NOTIFY_SECRET}
        channels = [
            notification,
            {"events": ["JobFaulted"], "email": {"to": ["ops@example.com"]}},
            {"format": "pagerduty", "events": ["JobFaulted"], "routingKey": ROUTING_KEY},
        ]
        body = {"properties": {"sku": {"name": "Standard"}, "notifications": channels}}
        assert api.put(api.collection(name), body).status_code == 201
    rotated = horarium(
        "secrets", "rotate", *setup.target(server),
        "--secret-key-file", str(old_file), "--new-key-file", str(new_file),
    )  # fmt: skip
    assert rotated.returncode == 0, rotated.stderr
    assert "the notification secrets of 1 collections" in rotated.stderr
    [new_key] = new_file.read_text().split()
    new = base64.b64decode(new_key)
    stored, email, pagerduty = asyncio.run(_notification_secrets(database_url(server)))
    assert stored["secret"]["key"] == pagerduty["secret"]["key"] == key_id(new)
    assert open_notification_secret(stored, Keyring([new])) == NOTIFY_SECRET
    assert open_notification_secret(pagerduty, Keyring([new])) == ROUTING_KEY
    assert "secret" not in email
    old_id = key_id(base64.b64decode(old_file.read_text()))
    data = database_bytes(database_url(server))
    assert old_id.encode() not in data and NOTIFY_SECRET.encode() not in data
    assert ROUTING_KEY.encode() not in data
    with setup.serve(new_file) as server:
        api = Api(server, subscription=api.subscription)
        kept = api.patch(api.collection(name), {"tags": {"rotated": "yes"}})
        assert kept.status_code == 200, kept.text
        shown = kept.json()["properties"]["notifications"]
        assert shown[0] == {"events": ["JobFaulted"], "uri": setup.url + "/n"}
        assert [n.get("format") for n in shown] == [None, "email", "pagerduty"]
        api.http.close()
