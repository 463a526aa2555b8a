"""What `serve` and `worker` do before they run, with the mistakes of a first start told in one
line (`OneLineError`: `Error: …` on stderr, exit code 2) instead of a traceback: the listening
socket is bound first (a port in use is said before anything else happens), then the database
is opened and migrated (PostgreSQL not running, a database that does not exist, a login
refused, a URL of another kind: `horarium.store.open_errors`)."""

from __future__ import annotations

import asyncio
import errno
import socket
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.api.first_key import make_data_dir
from horarium.options import OneLineError
from horarium.store.db import create_engine, migrate
from horarium.store.open_errors import check_url, explain

BACKLOG = 2048  # connections the kernel queues until the server accepts them (uvicorn's)


def bind(host: str, port: int, *, host_option: str, port_option: str) -> list[socket.socket]:
    """Listening TCP sockets on `host`:`port`: one for an address, one per address of a name
    (`localhost`: 127.0.0.1 and ::1), as asyncio's servers bind them (IPv6 sockets IPv6 only)."""
    sockets: list[socket.socket] = []
    try:
        found = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
        for family, kind, proto, _, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(BACKLOG)
            sock.set_inheritable(True)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise OneLineError(_bind_error(exc, host, port, host_option, port_option)) from None
    return sockets


def _bind_error(exc: OSError, host: str, port: int, host_option: str, port_option: str) -> str:
    where = f"{host}:{port}"
    if isinstance(exc, socket.gaierror):
        return f"{host_option} {host}: not an address or a name this machine can resolve."
    if exc.errno == errno.EADDRINUSE:
        return (
            f"{port_option} {port}: {where} is already in use (another Horarium, or another"
            f" service); stop it or choose another port with {port_option}."
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host_option} {host}: not an address of this machine."
    if exc.errno == errno.EACCES:
        return f"{port_option} {port}: permission denied (ports below 1024 need privileges)."
    return f"cannot listen on {where}: {exc.strerror or exc}."


def data_folder(path: Path) -> None:
    """Create the data folder (readable by its owner only) when it does not exist."""
    try:
        make_data_dir(path)
    except OSError as exc:
        reason = exc.strerror or exc
        raise OneLineError(f"--data-dir {path}: cannot create it ({reason}).") from None


def check_database_url(url: str) -> None:
    """Refuse a `--database` URL that is not SQLite or PostgreSQL."""
    problem = check_url(url)
    if problem is not None:
        raise OneLineError(problem)


async def open_database(url: str) -> AsyncEngine:
    """An engine on the database, migrated to this version's schema."""
    shown = make_url(url).render_as_string(hide_password=True)
    try:
        db = create_engine(url)
    except OSError as exc:  # SQLite: the file's folder cannot be made
        raise OneLineError(explain(exc, shown) or str(exc)) from None
    try:
        await migrate(db)
    except Exception as exc:
        await db.dispose()
        said = explain(exc, shown)
        if said is None:
            raise
        raise OneLineError(said) from None
    return db


def prepare_database(url: str) -> None:
    """Open and migrate the database once, in a loop of its own, before serving: a mistake is
    said now, in one line, rather than by a traceback from the server's start-up."""
    check_database_url(url)

    async def check() -> None:
        db = await open_database(url)
        await db.dispose()

    asyncio.run(check())
