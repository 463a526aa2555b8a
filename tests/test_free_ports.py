"""`tests.support.free_port`: ports the kernel does not hand out by itself, a slice per test
process, and never one that something listens on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from tests.support import _ephemeral_start, free_port


def test_ports_come_from_below_the_ephemeral_range_and_skip_a_taken_one() -> None:
    first = free_port()
    assert first < _ephemeral_start()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", first + 1))
        taken.listen()
        second = free_port()  # the next of the slice, but for the listener's port
    assert second not in (first, first + 1) and second < _ephemeral_start()


def _ports_of(worker: str) -> set[int]:
    code = "from tests.support import free_port; print(*(free_port() for _ in range(50)))"
    env = {**os.environ, "PYTEST_XDIST_WORKER": worker}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return {int(port) for port in out.stdout.split()}


def test_two_workers_are_never_given_the_same_port() -> None:
    assert not _ports_of("gw0") & _ports_of("gw1")
