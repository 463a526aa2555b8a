"""`horarium backup DEST` and `horarium restore SRC` (`horarium.store.backup`).

The secret key is never put into a backup silently: without `--include-key` the backup holds
none, and says so; `--include-key` copies the key file beside the database (mode 0600),
`--encrypt-key` seals it under a passphrase (`--passphrase-file`, or HORARIUM_BACKUP_PASSPHRASE).
docs/operations.md, "Backup and restore".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from sqlalchemy.engine import make_url

from horarium.cli.database import run_on
from horarium.cli.options import settings_from, settings_options
from horarium.config import Settings

if TYPE_CHECKING:
    from horarium.store.backup.making import KeyChoice, Made
    from horarium.store.backup.manifest import KeyCopy
    from horarium.store.backup.restoring import KeyTarget, Restored

_DATABASE_OPTIONS = ("data_dir", "database", "secret_key_file", "secret_key")
PASSPHRASE_VARIABLE = "HORARIUM_BACKUP_PASSPHRASE"

_passphrase_file = click.option(
    "--passphrase-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    envvar="HORARIUM_PASSPHRASE_FILE",
    show_envvar=True,
    help=f"File whose first line is the passphrase of a sealed key (or set {PASSPHRASE_VARIABLE}).",
)


@click.command()
@click.argument("dest", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--include-key",
    is_flag=True,
    envvar="HORARIUM_INCLUDE_KEY",
    show_envvar=True,
    help="Also copy the secret key into the backup (secret.key, mode 0600).",
)
@click.option(
    "--encrypt-key",
    is_flag=True,
    envvar="HORARIUM_ENCRYPT_KEY",
    show_envvar=True,
    help="Include the secret key sealed under a passphrase (secret.key.sealed).",
)
@_passphrase_file
@settings_options(api=False, only=_DATABASE_OPTIONS)
def backup(
    dest: Path,
    include_key: bool,
    encrypt_key: bool,
    passphrase_file: Path | None,
    **values: Any,
) -> None:
    """Back up the database into a new folder (the service may run).

    DEST: a new (or empty) folder. SQLite: a consistent copy of the live file. PostgreSQL:
    checks the server answers, writes the manifest (and key) and prints the pg_dump command
    that makes the dump in DEST. The secret key is left out unless --include-key or
    --encrypt-key is given."""
    from horarium.process.opening import fail, notice
    from horarium.store.backup import making
    from horarium.store.backup.manifest import BackupError, KeyCopy

    settings = settings_from(**values)
    url = _checked_url(settings)
    copy = KeyCopy.SEALED if encrypt_key else KeyCopy.PLAIN if include_key else KeyCopy.NONE
    try:
        choice = _key_choice(settings, copy, passphrase_file)
        if _is_sqlite(url):
            made = making.backup_sqlite(_sqlite_file(url), dest, choice)
        else:
            made = run_on(url, lambda: making.backup_postgres(url, dest, choice))
    except BackupError as exc:
        fail(str(exc))
    _report_backup(made, dest, url)
    if copy is KeyCopy.NONE:
        ids = ", ".join(made.manifest.sealed_with) or "unknown"
        notice(
            f"the secret key is not in this backup: the stored secrets (sealed with key id {ids})"
            f" cannot be read without it; keep a copy of {_key_source(settings)} apart from the"
            " backup, or back up with --include-key (--encrypt-key: sealed under a passphrase)"
        )


@click.command()
@click.argument("src", type=click.Path(path_type=Path, file_okay=False, exists=True))
@_passphrase_file
@settings_options(api=False, only=_DATABASE_OPTIONS)
def restore(src: Path, passphrase_file: Path | None, **values: Any) -> None:
    """Restore a backup into an empty data folder or database.

    SRC: the folder `horarium backup` made. Refuses a database that holds anything, and a
    SQLite file a running scheduler holds. The backup's secret key, when it has one, goes where
    the service reads it (--secret-key-file, or secret.key in --data-dir) unless a different
    key is there."""
    from horarium.process import engine_lock
    from horarium.process.opening import fail, notice
    from horarium.store.backup import restoring
    from horarium.store.backup.manifest import BackupError, KeyCopy, read
    from horarium.store.core.secret_keys import SecretKeyError

    settings = settings_from(**values)
    url = _checked_url(settings)
    try:
        sealed = read(src).secret_key is KeyCopy.SEALED
        passphrase = _passphrase(passphrase_file) if sealed else None
        key = _key_target(settings)
        if _is_sqlite(url):
            target = _sqlite_file(url)
            holder = engine_lock.take(url, "horarium restore")
            if holder is not None:
                fail(
                    f"the SQLite database {target} is in use by a running scheduler ({holder}):"
                    " stop it, and restore into an empty data folder"
                )
            done = restoring.restore_sqlite(src, target, key, passphrase)
        else:
            done = run_on(url, lambda: restoring.restore_postgres(src, url, key, passphrase))
    except (BackupError, SecretKeyError) as exc:
        fail(str(exc))
    for line in done.notices:
        notice(line)
    _report_restore(done, src, url)


def _key_target(settings: Settings) -> KeyTarget:
    """Where the restored service will read its key (`--secret-key` / its variable wins)."""
    from horarium.store.backup.restoring import KeyTarget
    from horarium.store.core.secret_keys import key_file_path, parse_keys

    path = key_file_path(settings.secret_key_file, settings.data_dir)
    if settings.secret_key:
        return KeyTarget(path, parse_keys(settings.secret_key, "HORARIUM_SECRET_KEY"))
    return KeyTarget(path)


def _report_backup(made: Made, dest: Path, url: str) -> None:
    from horarium.store.backup.manifest import KeyCopy
    from horarium.store.backup.postgres import has_password, shown_url

    manifest = made.manifest
    key = {
        KeyCopy.NONE: "not included",
        KeyCopy.PLAIN: "included (secret.key)",
        KeyCopy.SEALED: "included, sealed under the passphrase (secret.key.sealed)",
    }[manifest.secret_key]
    if made.dump_command is None:
        click.echo(
            f"Backed up {_sqlite_file(url)} (migration {manifest.schema_revision}:"
            f" {made.collections} collections, {made.jobs} jobs) into {dest} in"
            f" {made.seconds:.2f} s; secret key: {key}."
        )
        return
    click.echo(
        f"PostgreSQL answers: {shown_url(url)} is at migration {manifest.schema_revision}."
        f" {dest} holds the manifest (secret key: {key}); make the dump into it with:"
    )
    click.echo(f"  {made.dump_command}")
    if has_password(url):
        click.echo("(pg_dump reads the password from PGPASSWORD or ~/.pgpass)")


def _report_restore(done: Restored, src: Path, url: str) -> None:
    from horarium.store.backup.postgres import has_password

    manifest = done.manifest
    made = f"Horarium {manifest.horarium}, migration {manifest.schema_revision}, {manifest.made_at}"
    key = f"; the secret key into {done.key_written}" if done.key_written else ""
    if done.restore_command is None:
        click.echo(
            f"Restored {src} ({made}) into {_sqlite_file(url)}{key}. Start the service on it,"
            " or run `horarium migrate` first to bring it to this version's schema."
        )
        return
    click.echo(f"Checked {src} ({made}): the database is empty{key}. Put the data back with:")
    click.echo(f"  {done.restore_command}")
    if has_password(url):
        click.echo("(pg_restore reads the password from PGPASSWORD or ~/.pgpass)")
    click.echo("then start the service on it, or run `horarium migrate` first.")


def _key_choice(settings: Settings, copy: KeyCopy, passphrase_file: Path | None) -> KeyChoice:
    from horarium.process.opening import fail
    from horarium.store.backup.making import KeyChoice
    from horarium.store.backup.manifest import KeyCopy
    from horarium.store.core.secret_keys import SecretKeyError, read_existing

    if copy is KeyCopy.NONE:
        return KeyChoice(copy)
    passphrase = _passphrase(passphrase_file) if copy is KeyCopy.SEALED else None
    try:
        keyring = read_existing(
            key=settings.secret_key, key_file=settings.secret_key_file, data_dir=settings.data_dir
        )
    except SecretKeyError as exc:
        fail(f"cannot include the secret key: {exc}")
    return KeyChoice(copy, keyring, passphrase)


def _passphrase(passphrase_file: Path | None) -> str:
    """The passphrase: the first line of `passphrase_file`, else HORARIUM_BACKUP_PASSPHRASE."""
    from horarium.process.opening import fail

    if passphrase_file is not None:
        try:
            lines = passphrase_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"--passphrase-file {passphrase_file}: {getattr(exc, 'strerror', None) or exc}")
        phrase = lines[0] if lines else ""
    else:
        phrase = os.environ.get(PASSPHRASE_VARIABLE, "")
    if not phrase:
        fail(
            "a sealed secret key needs a passphrase: --passphrase-file FILE (its first line) or"
            f" {PASSPHRASE_VARIABLE}"
        )
    return phrase


def _checked_url(settings: Settings) -> str:
    from horarium.process.opening import fail
    from horarium.store.core.open_errors import check_url

    url = settings.database_url
    problem = check_url(url)
    if problem is not None:
        fail(problem)
    if _is_sqlite(url) and make_url(url).database in (None, "", ":memory:"):
        fail("--database: an in-memory SQLite database has nothing to back up or restore")
    return url


def _is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _sqlite_file(url: str) -> Path:
    return Path(str(make_url(url).database))


def _key_source(settings: Settings) -> str:
    from horarium.store.core.secret_keys import key_file_path

    if settings.secret_key:
        return "HORARIUM_SECRET_KEY"
    return str(key_file_path(settings.secret_key_file, settings.data_dir))
