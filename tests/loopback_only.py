"""The tests' network rule, enforced: a socket of this process may connect only to loopback
(127.0.0.0/8, ::1) or a Unix socket. Anything else is refused before a packet leaves, and
recorded, so that a test whose code swallows the refusal (an HTTP client turning it into a failed
attempt) still fails. Installed once per process (`install`); the hook sees Python-level
`socket.connect`, which asyncio's own loop uses (uvloop connects in C, unseen)."""

from __future__ import annotations

import ipaddress
import socket
import sys
from typing import Any

refused: list[str] = []
_installed = False


def is_loopback(host: str) -> bool:
    """Whether every address `host` names (an address, or a name resolved here) is loopback."""
    try:
        return _loopback_address(host)
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return True  # resolves to nothing: nothing to connect to
    return all(_loopback_address(str(info[4][0])) for info in found)


def _loopback_address(text: str) -> bool:
    address = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect":
        return
    sock, address = args
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = str(address[0])
    if not is_loopback(host):
        refused.append(f"{host}:{address[1]}")
        raise PermissionError(f"tests may connect only to loopback, not {host}:{address[1]}")


def install() -> None:
    global _installed
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
