"""`horarium secrets`: maintenance of the secrets stored encrypted in the database.

`rotate --new-key-file F` seals every stored secret again under the first key of F, opening the
old ones with the current key (`--secret-key-file` / `HORARIUM_SECRET_KEY` / the default file in
`--data-dir`) and F's other keys. F is created, holding a new key, when it does not exist. The
procedure that keeps running services working: docs/security.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from horarium.cli.database import run_on
from horarium.cli.options import settings_from, settings_options

if TYPE_CHECKING:
    from horarium.store.core.resealing import SealReport
    from horarium.store.core.sealing import Keyring

_DATABASE_OPTIONS = ("data_dir", "database", "secret_key_file", "secret_key")


@click.group()
def secrets() -> None:
    """Manage the encryption of stored secrets."""


@secrets.command()
@settings_options(api=False, only=_DATABASE_OPTIONS)
@click.option(
    "--new-key-file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Key file whose first key seals from now on (created with a new key if missing).",
)
def rotate(new_key_file: Path, **values: Any) -> None:
    """Seal every stored secret again under a new key."""
    from horarium.process.opening import fail, notice, open_keyring
    from horarium.store.core.sealing import Keyring
    from horarium.store.core.secret_keys import (
        SecretKeyError,
        new_key,
        read_key_file,
        write_key_file,
    )

    settings = settings_from(**values)
    if not (settings.secret_key or settings.secret_key_file):
        default = settings.data_dir / "secret.key"
        if not default.exists():
            fail(f"secret key file {default} does not exist: there is no key to rotate from")
    current = open_keyring(settings)
    try:
        if not new_key_file.exists():
            write_key_file(new_key_file, [new_key()])
            notice(f"created the key file {new_key_file} with a new key")
        new = read_key_file(new_key_file)
    except SecretKeyError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{new_key_file}: {exc.strerror or exc}")
    keyring = Keyring([*new.keys, *current.keys])
    report = run_on(settings.database_url, lambda: _rotate(settings.database_url, keyring))
    notice(
        f"sealed the secrets of {report.resealed} jobs again under key id {keyring.sealing_id}"
        f" ({report.current} already were; {report.sealed} were in clear), and the notification"
        f" secrets of {report.collections} collections"
    )
    if report.unreadable_collections:
        ids = ", ".join(sorted(report.unreadable_collections))
        fail(
            f"the notification secrets of {sum(report.unreadable_collections.values())}"
            f" collections (key id {ids}) were sealed with a key neither the current key nor"
            " the new key file holds; they were left as they are"
        )
    if report.unreadable:
        fail(
            f"{report.unreadable_text()} were sealed with a key neither the"
            " current key nor the new key file holds; they were left as they are"
        )


async def _rotate(url: str, keyring: Keyring) -> SealReport:
    from horarium.store.core import resealing
    from horarium.store.core.db import create_engine, migrate

    db = create_engine(url, keyring=keyring)
    try:
        await migrate(db)
        report = await resealing.rotate(db, keyring)
        if report.resealed or report.sealed or report.collections:
            await resealing.drop_old_copies(db)
        return report
    finally:
        await db.dispose()
