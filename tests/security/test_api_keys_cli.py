"""`horarium keys create / list / revoke`, on the database a real server uses."""

from __future__ import annotations

import re
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from horarium.store.core.secret_keys import encode, new_key
from tests import forkserver
from tests.security.key_tools import API_VERSION, collection_path, key_rows, keys_cli
from tests.server_process import ServerProcess
from tests.support import free_port


def test_create_prints_the_token_and_nothing_else(server: ServerProcess) -> None:
    made = keys_cli(server, "create", "--subscription", "sub-cli")
    assert made.returncode == 0, made.stderr
    assert re.fullmatch(r"hrm_[A-Za-z0-9_-]{43}\n", made.stdout), made.stdout
    token = made.stdout.strip()
    path = collection_path("sub-cli") + "/jobs"
    response = httpx.get(
        server.url(path), params=API_VERSION, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 404  # authenticated: the collection does not exist


def test_list_shows_each_key_but_never_its_token_or_hash(server: ServerProcess) -> None:
    name = f"lister-{uuid.uuid4().hex[:6]}"
    made = keys_cli(
        server, "create", "--subscription", "Sub-List", "--role", "reader",
        "--name", name, "--expires-in", "30",
    )  # fmt: skip
    token = made.stdout.strip()
    listing = keys_cli(server, "list")
    assert listing.returncode == 0, listing.stderr
    header, *lines = listing.stdout.splitlines()
    assert header.split() == ["NAME", "SUBSCRIPTION", "ROLE", "CREATED", "EXPIRES"]
    mine = next(line.split() for line in lines if line.startswith(name + " "))
    assert mine[:3] == [name, "sub-list", "reader"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", mine[4])  # in 30 days
    admin = next(line.split() for line in lines if line.startswith("admin "))
    assert admin[1:3] == ["*", "contributor"] and admin[4] == "never"
    hashes = {str(row["token_sha256"]) for row in key_rows(server)}
    for secret in (token, server.token, *hashes):
        assert secret and secret not in listing.stdout + listing.stderr


def test_a_default_key_is_a_contributor_with_a_generated_name(server: ServerProcess) -> None:
    before = {row["name"] for row in key_rows(server)}
    made = keys_cli(server, "create", "--subscription", "sub-default")
    assert made.returncode == 0
    [row] = [row for row in key_rows(server) if row["name"] not in before]
    assert row["role"] == "contributor" and row["subscription"] == "sub-default"
    assert row["name"].startswith("key-") and row["expires_at"] is None
    # The generated name, which revoke takes, is told on stderr (stdout holds the token only).
    assert made.stderr.strip().splitlines()[-1] == (
        f"Made the key '{row['name']}' (contributor of sub-default); revoke it with"
        f" `horarium keys revoke {row['name']}`."
    )
    assert row["name"] not in made.stdout


def test_revoking_an_unknown_name_is_a_one_line_error(server: ServerProcess) -> None:
    revoked = keys_cli(server, "revoke", "no-such-key")
    assert revoked.returncode != 0
    assert revoked.stdout == ""
    assert revoked.stderr.strip().count("\n") == 0 and "no-such-key" in revoked.stderr


def test_a_taken_name_or_a_bad_subscription_is_a_one_line_usage_error(
    server: ServerProcess,
) -> None:
    for args in (
        ["--subscription", "sub-x", "--name", "admin"],
        ["--subscription", "not a subscription"],
        ["--subscription", "sub-x", "--name", "bad name!"],
    ):
        made = keys_cli(server, "create", *args)
        assert made.returncode == 2, made
        assert made.stdout == "" and made.stderr.strip().count("\n") == 0, made.stderr


def test_keys_reads_the_database_option_from_the_environment(tmp_path: Path) -> None:
    import os
    import sys

    database = f"sqlite:///{tmp_path / 'keys.sqlite3'}"
    env = {**os.environ, "HORARIUM_DATABASE": database}
    command = [sys.executable, "-m", "horarium.cli", "keys"]
    made = forkserver.run(
        [*command, "create", "--subscription", "*", "--name", "from-env"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    listing = forkserver.run(
        [*command, "list"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert "from-env" in listing.stdout
    assert not (tmp_path / "horarium-data").exists()  # the database named, not the default


def test_keys_take_the_database_options_of_serve_and_no_others() -> None:
    from click.testing import CliRunner

    from horarium import cli

    for command in ("create", "list", "revoke"):
        text = CliRunner().invoke(cli.main, ["keys", command, "--help"], terminal_width=200).output
        assert "--database" in text and "HORARIUM_DATABASE" in text, command
        assert "--data-dir" in text and "HORARIUM_DATA_DIR" in text, command
        assert "--host" not in text and "--lease-seconds" not in text, command


@pytest.mark.parametrize("command", [["keys", "list"], ["secrets", "rotate", "--new-key-file"]])
def test_a_database_that_cannot_be_reached_is_one_line(tmp_path: Path, command: list[str]) -> None:
    """`keys` and `secrets rotate` tell an unreachable database as `serve` does: one line, exit
    code 2, no traceback (nothing listens on the port)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "secret.key").write_text(encode(new_key()) + "\n")
    (data / "secret.key").chmod(0o600)
    if command[-1] == "--new-key-file":
        command = [*command, str(tmp_path / "new.key")]
    database = f"postgresql://postgres@127.0.0.1:{free_port()}/nothing"
    arguments = [*command, "--data-dir", str(data), "--database", database]
    done = forkserver.run(
        [sys.executable, "-m", "horarium.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    # (`secrets rotate` first says it made the new key file)
    [line] = [x for x in done.stderr.splitlines() if not x.startswith("horarium: created")]
    assert line.startswith("Error: cannot reach PostgreSQL at 127.0.0.1:"), line
