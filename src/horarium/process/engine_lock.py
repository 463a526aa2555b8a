"""One scheduler per SQLite database: a process that runs the engine on a SQLite file holds an
exclusive lock on `<file>.lock` for its life (the kernel lets go of it when the process ends,
however it ends), and a second one refuses to start, naming the process that holds it. Several
engines are a PostgreSQL cluster's business; on SQLite a second one would only contend for the
one writer and double the periodic work."""

from __future__ import annotations

import fcntl
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from sqlalchemy.engine import make_url

_held: list[IO[str]] = []  # the open lock files: kept for the process's life


def lock_path(database_url: str) -> Path | None:
    """The lock file of a SQLite database file; None for PostgreSQL or an in-memory one."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(f"{url.database}.lock")


def hold(database_url: str, command: str) -> str | None:
    """Take the lock for this process (`command` names it to a second one); returns why it
    cannot (None: held, or no lock needed)."""
    holder = take(database_url, command)
    if holder is None:
        return None
    return (
        f"the SQLite database {make_url(database_url).database} has a scheduler already"
        f" ({holder}):"
        " one process may run the scheduler on a SQLite database (run `serve --no-engine`"
        " beside it, or use PostgreSQL for several)."
    )


def take(database_url: str, command: str) -> str | None:
    """Take the lock for this process's life; when another process holds it, returns who
    (its pid, command and start, as it wrote them). None: taken, or no lock needed."""
    path = lock_path(database_url)
    if path is None:
        return None
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    file = open(path, "a+", encoding="utf-8")  # held open for the process's life
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.seek(0)
        holder = file.read().strip() or "a process that has not written its name yet"
        file.close()
        return holder
    os.chmod(path, 0o600)
    file.seek(0)
    file.truncate()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    file.write(f"pid {os.getpid()}, `{command}`, since {started}\n")
    file.flush()
    _held.append(file)
    return None
