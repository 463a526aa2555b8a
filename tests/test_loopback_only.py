"""The tests' own network guard (tests/loopback_only.py) refuses what it must, lets loopback
through, and does so without sending anything."""

from __future__ import annotations

import socket

import pytest

from tests import loopback_only


def test_a_connection_to_a_loopback_listener_goes_through() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


def test_a_connection_off_loopback_is_refused_before_it_is_made() -> None:
    before = len(loopback_only.refused)
    with socket.socket() as sock, pytest.raises(PermissionError, match="only to loopback"):
        sock.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed, and never tried here
    assert loopback_only.refused[before:] == ["192.0.2.1:9"]
    del loopback_only.refused[before:]  # this test's own refusal is the expected one


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.3", True), ("::1", True), ("::ffff:127.0.0.1", True), ("localhost", True),
     ("169.254.169.254", False), ("10.0.0.1", False), ("::ffff:10.0.0.1", False)],
)  # fmt: skip
def test_addresses_are_judged_by_where_they_lead(host: str, loopback: bool) -> None:
    assert loopback_only.is_loopback(host) is loopback
