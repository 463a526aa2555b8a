"""The listening sockets of `serve` (and of `--metrics-port`), bound before anything else
happens, so that a port in use, or an address that is not this machine's, is one line
(`OneLineError`: `Error: …` on stderr, exit code 2) rather than a traceback from uvicorn. The
database comes next: `horarium.process.opening`."""

from __future__ import annotations

import errno
import socket

from horarium.cli.options import OneLineError

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
