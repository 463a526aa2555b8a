"""First start: when the database holds no API key, `serve` makes a contributor key for every
subscription and writes its token to `<data-dir>/admin-token` (mode 0600), so that the operator
has a credential without ever passing one on a command line.

Processes starting together make one key: the decision runs in one write transaction (SQLite:
`BEGIN IMMEDIATE`; PostgreSQL: under an advisory lock). The file is written before the
transaction commits and removed if it fails, so a key never exists without its file. When keys
exist, nothing is done (a deleted admin-token file is not made again)."""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.api import api_keys
from horarium.api.principal import ALL_SUBSCRIPTIONS, Role
from horarium.store.core.db import write_transaction
from horarium.store.resources import api_keys as rows

ADMIN_TOKEN_FILE = "admin-token"
ADMIN_KEY_NAME = "admin"


def make_data_dir(data_dir: Path) -> None:
    """Create the data folder, readable by its owner only, when it does not exist."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)


def write_secret_file(path: Path, text: str) -> None:
    """Write a new file only its owner may read (a file left at `path` is replaced)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


async def make_first_key(engine: AsyncEngine, data_dir: Path) -> Path | None:
    """The admin-token file's path when this call made the first key; None when keys exist."""
    path = data_dir / ADMIN_TOKEN_FILE
    written = False
    try:
        async with write_transaction(engine) as conn:
            if not await rows.none_exist(conn):
                return None
            issued = await api_keys.issue(
                conn,
                subscription=ALL_SUBSCRIPTIONS,
                role=Role.CONTRIBUTOR,
                name=ADMIN_KEY_NAME,
                now=datetime.now(UTC),
            )
            await asyncio.to_thread(make_data_dir, data_dir)
            await asyncio.to_thread(write_secret_file, path, issued.token)
            written = True
    except BaseException:
        if written:
            path.unlink(missing_ok=True)
        raise
    return path
