"""systemd's readiness protocol (`sd_notify`): under a unit with `Type=notify`, the process says
`READY=1` once it serves (the start-up line is printed) and `STOPPING=1` when it begins to
drain. Nothing happens unless systemd gave the process a `NOTIFY_SOCKET`."""

from __future__ import annotations

import logging
import os
import socket

log = logging.getLogger(__name__)


def notify(state: str) -> None:
    """Send `state` (e.g. "READY=1") to systemd's notification socket, if there is one."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return
    if address.startswith("@"):  # an abstract socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(state.encode())
    except OSError as exc:
        log.warning("could not tell systemd %s (NOTIFY_SOCKET %s): %s", state, address, exc)
