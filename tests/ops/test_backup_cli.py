"""`horarium backup`, `restore` and `migrate` from the command line: the secret key goes into a
backup only when asked for (in clear, or sealed under a passphrase that alone opens it), and
`restore` refuses what would overwrite or mix up data — a database that holds anything, one a
running scheduler holds, another key, a stray WAL file, a backup of a newer version, a backup of
the other kind of database. Each refusal is one `Error:` line with exit code 2."""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
from pathlib import Path

import pytest

from horarium.store.core.db import create_engine, migrate
from horarium.store.core.revisions import head_revision
from horarium.store.core.secret_keys import new_key, write_key_file
from tests.ops.ops_support import horarium, one_line_error
from tests.server_process import running_server
from tests.support import free_port, fresh_pg_database

HEAD = head_revision()  # the migration a database of this version is at

PASSPHRASE = "correct horse battery staple"


def _ok(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def _migrated(url: str) -> None:
    async def run() -> None:
        db = create_engine(url)
        try:
            await migrate(db)
        finally:
            await db.dispose()

    asyncio.run(run())


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data folder with a migrated SQLite database and a secret key."""
    folder = tmp_path / "data"
    _migrated(f"sqlite:///{folder / 'horarium.sqlite3'}")
    write_key_file(folder / "secret.key", [new_key()])
    return folder


def _manifest(backup: Path) -> dict[str, object]:
    found: dict[str, object] = json.loads((backup / "manifest.json").read_text())
    return found


def test_a_backup_leaves_the_key_out_and_says_so(data: Path, tmp_path: Path) -> None:
    run = horarium("backup", str(tmp_path / "b"), "--data-dir", str(data))
    assert _ok(run).startswith(f"Backed up {data / 'horarium.sqlite3'} (migration {HEAD}:")
    assert "secret key: not included" in run.stdout
    assert "the secret key is not in this backup" in run.stderr
    assert f"keep a copy of {data / 'secret.key'}" in run.stderr
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "horarium.sqlite3",
        "manifest.json",
    ]
    assert _manifest(tmp_path / "b")["secret_key"] == "none"
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "b" / "horarium.sqlite3").stat().st_mode) == 0o600

    restored = horarium("restore", str(tmp_path / "b"), "--data-dir", str(tmp_path / "new"))
    assert _ok(restored).startswith(f"Restored {tmp_path / 'b'} (Horarium ")
    assert "the backup holds no secret key" in restored.stderr
    assert not (tmp_path / "new" / "secret.key").exists()


def test_include_key_copies_the_key_file_and_restore_puts_it_back(
    data: Path, tmp_path: Path
) -> None:
    _ok(horarium("backup", str(tmp_path / "b"), "--data-dir", str(data), "--include-key"))
    copied = tmp_path / "b" / "secret.key"
    assert copied.read_text() == (data / "secret.key").read_text()
    assert stat.S_IMODE(copied.stat().st_mode) == 0o600
    assert _manifest(tmp_path / "b")["secret_key"] == "plain"

    new = tmp_path / "new"
    restored = _ok(horarium("restore", str(tmp_path / "b"), "--data-dir", str(new)))
    assert f"the secret key into {new / 'secret.key'}" in restored
    assert (new / "secret.key").read_text() == (data / "secret.key").read_text()
    assert stat.S_IMODE((new / "secret.key").stat().st_mode) == 0o600


def test_encrypt_key_seals_it_under_a_passphrase_that_alone_opens_it(
    data: Path, tmp_path: Path
) -> None:
    backup, new = tmp_path / "b", tmp_path / "new"
    missing = horarium("backup", str(backup), "--data-dir", str(data), "--encrypt-key")
    assert "a sealed secret key needs a passphrase" in one_line_error(missing)
    assert not backup.exists()

    phrase = {"HORARIUM_BACKUP_PASSPHRASE": PASSPHRASE}
    run = horarium("backup", str(backup), "--data-dir", str(data), "--encrypt-key", env=phrase)
    assert "sealed under the passphrase (secret.key.sealed)" in _ok(run)
    sealed = (backup / "secret.key.sealed").read_text()
    key_text = (data / "secret.key").read_text().strip()
    assert key_text not in sealed and json.loads(sealed)["kdf"] == "scrypt"
    assert not (backup / "secret.key").exists()

    asked = horarium("restore", str(backup), "--data-dir", str(new))
    assert "a sealed secret key needs a passphrase" in one_line_error(asked)
    wrong = horarium(
        "restore", str(backup), "--data-dir", str(new), env={"HORARIUM_BACKUP_PASSPHRASE": "no"}
    )
    assert "the passphrase does not open" in one_line_error(wrong)
    assert not (new / "horarium.sqlite3").exists()
    (tmp_path / "phrase").write_text(PASSPHRASE + "\n")
    _ok(
        horarium(
            "restore", str(backup), "--data-dir", str(new), "--passphrase-file",
            str(tmp_path / "phrase"),
        )
    )  # fmt: skip
    assert (new / "secret.key").read_text().strip() == key_text


def test_a_backup_goes_only_into_a_new_folder_of_a_database_that_exists(
    data: Path, tmp_path: Path
) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "old").write_text("x")
    taken = horarium("backup", str(tmp_path / "used"), "--data-dir", str(data))
    assert "is not empty: name a new (or empty) folder" in one_line_error(taken)
    nothing = horarium("backup", str(tmp_path / "b"), "--data-dir", str(tmp_path / "none"))
    assert "there is no SQLite database at" in one_line_error(nothing)
    assert not (tmp_path / "none").exists()
    unmigrated = horarium("migrate", "--data-dir", str(tmp_path / "none"))
    assert "there is no SQLite database at" in one_line_error(unmigrated)


def test_restore_refuses_a_database_that_holds_anything(data: Path, tmp_path: Path) -> None:
    _ok(horarium("backup", str(tmp_path / "b"), "--data-dir", str(data)))
    before = (data / "horarium.sqlite3").read_bytes()
    line = one_line_error(horarium("restore", str(tmp_path / "b"), "--data-dir", str(data)))
    assert f"the SQLite database {data / 'horarium.sqlite3'} is not empty (migration {HEAD}" in line
    assert (data / "horarium.sqlite3").read_bytes() == before

    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "horarium.sqlite3-wal").write_bytes(b"left over")
    line = one_line_error(horarium("restore", str(tmp_path / "b"), "--data-dir", str(stray)))
    assert "horarium.sqlite3-wal is left from another database" in line
    assert not (stray / "horarium.sqlite3").exists()


def test_restore_refuses_a_database_a_running_scheduler_holds(tmp_path: Path) -> None:
    with running_server(tmp_path / "live", engine=True) as server:
        backup = tmp_path / "b"
        _ok(horarium("backup", str(backup), "--data-dir", str(server.data_dir)))
        line = one_line_error(horarium("restore", str(backup), "--data-dir", str(server.data_dir)))
        assert "is in use by a running scheduler (pid " in line
        assert "`horarium serve`" in line
        assert server.process is not None and server.process.poll() is None


def test_restore_keeps_an_existing_key_file_and_refuses_another(data: Path, tmp_path: Path) -> None:
    _ok(horarium("backup", str(tmp_path / "b"), "--data-dir", str(data), "--include-key"))
    same = tmp_path / "same"
    same.mkdir()
    (same / "secret.key").write_text((data / "secret.key").read_text())
    kept = _ok(horarium("restore", str(tmp_path / "b"), "--data-dir", str(same)))
    assert "the secret key into" not in kept  # it is there already

    other = tmp_path / "other"
    write_key_file(other / "secret.key", [new_key()])
    line = one_line_error(horarium("restore", str(tmp_path / "b"), "--data-dir", str(other)))
    assert f"{other / 'secret.key'} holds another key (id " in line
    assert not (other / "horarium.sqlite3").exists()


def test_restore_refuses_a_newer_version_s_backup_and_the_other_kind(
    data: Path, tmp_path: Path
) -> None:
    backup = tmp_path / "b"
    _ok(horarium("backup", str(backup), "--data-dir", str(data)))
    manifest = _manifest(backup)
    (backup / "manifest.json").write_text(json.dumps({**manifest, "schema_revision": "0099"}))
    line = one_line_error(horarium("restore", str(backup), "--data-dir", str(tmp_path / "n")))
    assert "was made by a newer Horarium (0.1.0, migration 0099)" in line
    (backup / "manifest.json").write_text(json.dumps(manifest))
    url = f"postgresql://postgres@127.0.0.1:{free_port()}/horarium"
    line = one_line_error(horarium("restore", str(backup), "--database", url))
    assert "is a backup of a SQLite database; restore it into SQLite" in line
    line = one_line_error(horarium("restore", str(tmp_path), "--data-dir", str(tmp_path / "n")))
    assert "is not a Horarium backup: it has no manifest.json" in line


@pytest.mark.postgres
def test_postgres_backup_checks_the_server_and_says_how_to_dump(tmp_path: Path) -> None:
    unreachable = f"postgresql://postgres@127.0.0.1:{free_port()}/horarium"
    line = one_line_error(horarium("backup", str(tmp_path / "x"), "--database", unreachable))
    assert "cannot reach PostgreSQL at 127.0.0.1:" in line
    assert not (tmp_path / "x").exists()
    with fresh_pg_database() as url:
        empty = horarium("backup", str(tmp_path / "e"), "--database", url)
        assert "is not a Horarium database" in one_line_error(empty)
        _migrated(url)
        backup = tmp_path / "b"
        said = _ok(horarium("backup", str(backup), "--database", url, "--data-dir", str(tmp_path)))
        assert f"is at migration {HEAD}" in said
        assert (
            f"  pg_dump --format=custom --file={backup / 'horarium.pgdump'} --dbname={url}" in said
        )
        assert _manifest(backup)["database"] == "postgresql"
        (backup / "horarium.pgdump").write_bytes(b"")  # restore only checks that it is there
        line = one_line_error(horarium("restore", str(backup), "--database", url))
        assert f"already holds Horarium's tables (migration {HEAD})" in line
