"""What `serve` and `worker` do before anything else: the data folder private (mode 0700), the
SQLite engine lock taken (one scheduler per SQLite file: `engine_lock`), the secret key loaded
(or created), the database migrated, secrets stored in clear by an older
version sealed, and a key that cannot open the stored secrets (jobs' secrets, collections'
notification secrets) refused (both read every job and notifying collection, until the store is
marked sealed: `store.core.seal_marks`).

A mistake is one line on stderr and exit code 2 — a database that cannot be opened too
(PostgreSQL not reachable, a database that does not exist, a login refused, a URL of another
kind: `horarium.store.core.open_errors`); notices (a key created, secrets sealed, a mode tightened)
are one line each (an event under `--log-format json`).
"""

from __future__ import annotations

import asyncio
import stat
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn

from sqlalchemy.engine import make_url

from horarium import logs
from horarium.config import Settings
from horarium.process import engine_lock
from horarium.store.core.db import create_engine, migrate
from horarium.store.core.open_errors import check_url, explain
from horarium.store.core.resealing import drop_old_copies, seal_clear_secrets
from horarium.store.core.sealing import Keyring
from horarium.store.core.secret_keys import SecretKeyError, load


def fail(message: str) -> NoReturn:
    """A startup mistake: one line on stderr, exit code 2."""
    print(f"Error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def notice(message: str) -> None:
    if logs.is_json():
        logs.warn(message)
    else:
        print(f"horarium: {message}", file=sys.stderr, flush=True)


def prepare(settings: Settings, command: str) -> Keyring:
    """Everything above, before the service starts; returns the keyring to attach. `command`
    names this process to another that finds the SQLite engine lock held (`engine_lock`)."""
    problem = check_url(settings.database_url)
    if problem is not None:
        fail(problem)
    private_data_dir(settings)
    if settings.run_engine:
        taken = engine_lock.hold(settings.database_url, command)
        if taken is not None:
            fail(taken)
    url = settings.database_url
    _explained(_reach_database(url), url)  # before a key is made for a database not there
    keyring = open_keyring(settings)
    _explained(_prepare_database(settings, keyring), url)
    return keyring


def _explained(work: Coroutine[Any, Any, None], url: str) -> None:
    """Run `work`; a database that cannot be opened is one line (`store.core.open_errors`)."""
    try:
        asyncio.run(work)
    except Exception as exc:
        said = explain(exc, make_url(url).render_as_string(hide_password=True))
        if said is None:
            raise
        fail(said)


async def _reach_database(url: str) -> None:
    """Connect once (the database exists and lets this process in)."""
    db = create_engine(url)
    try:
        async with db.connect():
            pass
    finally:
        await db.dispose()


def private_data_dir(settings: Settings) -> None:
    """Create the data folder with mode 0700 when this process keeps anything in it (the SQLite
    database, the default key file), and take others' access away from an existing one."""
    uses = settings.database is None or not (settings.secret_key or settings.secret_key_file)
    if not uses:
        return
    folder = settings.data_dir
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        mode = stat.S_IMODE(folder.stat().st_mode)
        if mode & 0o077:
            folder.chmod(0o700)
            notice(f"data folder {folder}: mode {mode:04o} changed to 0700")
    except OSError as exc:
        fail(f"data folder {folder}: {exc.strerror or exc}")


def open_keyring(settings: Settings) -> Keyring:
    """The process's keyring (see `store.core.secret_keys`), saying in one line what it did."""
    try:
        loaded = load(
            key=settings.secret_key, key_file=settings.secret_key_file, data_dir=settings.data_dir
        )
    except SecretKeyError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"secret key: {exc.strerror or exc} ({getattr(exc, 'filename', '')})")
    if loaded.created:
        notice(
            f"created the secret key {loaded.source} (key id {loaded.keyring.sealing_id}); keep"
            " a copy with the database's backups: without it the stored secrets cannot be read"
        )
    if loaded.warning:
        notice(loaded.warning)
    return loaded.keyring


async def _prepare_database(settings: Settings, keyring: Keyring) -> None:
    db = create_engine(settings.database_url, keyring=keyring)
    try:
        await migrate(db)
        report = await seal_clear_secrets(db, keyring)
        if report.sealed:
            await drop_old_copies(db)
    finally:
        await db.dispose()
    if report.sealed:
        notice(f"sealed the secrets of {report.sealed} jobs that were stored in clear")
    if report.any_unreadable:
        fail(
            f"{report.unreadable_text()} were sealed with a key this process"
            f" does not have (its key id: {', '.join(keyring.ids)}); every process on one"
            " database needs the same key (--secret-key-file or HORARIUM_SECRET_KEY; see"
            " docs/security.md)"
        )
