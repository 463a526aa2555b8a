"""Lease owners: who holds a claim, and whether a holder is known to be gone.

An owner is `host:pid:random`. After `kill -9` and a restart on the same machine the new process
can tell that the old one is gone (no such pid, or its own pid under another random part — pid 1
in a container) and takes its executions over at once instead of waiting for the leases to run
out. On another host nothing can be known: there the lease expiry decides.
"""

from __future__ import annotations

import os
import socket
import uuid


def owner_id() -> str:
    return f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def is_gone(owner: str, me: str) -> bool:
    """True only when certain that `owner` (a process on this host) no longer runs."""
    try:
        host, pid, _ = owner.rsplit(":", 2)
        my_host, my_pid, _ = me.rsplit(":", 2)
    except ValueError:
        return False
    if owner == me or host != my_host:
        return False
    if pid == my_pid:
        return True  # an earlier process that had our pid
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, ValueError, OverflowError):
        return False
    return False
