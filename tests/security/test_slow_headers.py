"""A client that trickles a request's headers (slowloris) is disconnected once
`--header-timeout` passes, on a new connection and on a keep-alive one; a client that sends its
headers in pieces within the bound is answered. Before, such a connection stayed open as long
as the client kept it. An idle keep-alive connection stays open `--keep-alive-timeout` seconds
(30 by default: longer than clients keep idle connections in their pools, so that none sends a
request on a connection the server is closing), and is closed after that."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from tests.server_process import ServerProcess, running_server

HEADER_TIMEOUT = 3.0  # seconds, the server's --header-timeout here
CLIENT_POOL = 5.0  # seconds httpx keeps an idle connection (uvicorn's own keep-alive too)
PATIENCE = 30.0  # seconds a test waits for the server to close: far beyond the bound


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    args = ["--header-timeout", str(HEADER_TIMEOUT)]
    with running_server(tmp_path_factory.mktemp("slow-headers"), args=args) as running:
        yield running


def _connect(server: ServerProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=PATIENCE)
    return sock


def _closed_after(sock: socket.socket) -> float:
    """Seconds until the server closes `sock` (what it sends before that is read and dropped)."""
    began = time.monotonic()
    while sock.recv(65536):
        pass
    return time.monotonic() - began


def _response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before the response's head: {data!r}"
        data += chunk
    return data


def test_headers_that_trickle_in_are_cut_off(server: ServerProcess) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the end
        took = _closed_after(sock)
    assert took < PATIENCE / 2, f"the server kept the connection {took:.1f} s"


def test_a_connection_that_sends_nothing_is_closed(server: ServerProcess) -> None:
    with _connect(server) as sock:
        took = _closed_after(sock)
    assert took < PATIENCE / 2


def test_the_next_request_on_a_kept_connection_is_bounded_too(server: ServerProcess) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert _response(sock).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request begins, and stalls
        took = _closed_after(sock)
    assert took < PATIENCE / 2


def test_headers_sent_in_pieces_within_the_bound_are_answered(server: ServerProcess) -> None:
    with _connect(server) as sock:
        for piece in (b"GET /healthz HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"\r\n"):
            sock.sendall(piece)
            time.sleep(0.1)  # three pieces: far within the bound
        assert _response(sock).startswith(b"HTTP/1.1 200")


def _exchange(sock: socket.socket) -> bytes:
    """GET /healthz on `sock` and its whole answer (head and body)."""
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = _response(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed before the response's body"
        body += chunk
    return head


def test_a_kept_connection_idle_longer_than_client_pools_keep_theirs_is_answered(
    server: ServerProcess,
) -> None:
    with _connect(server) as sock:
        assert _exchange(sock).startswith(b"HTTP/1.1 200")
        time.sleep(CLIENT_POOL + 1)  # a pool keeping connections longer reuses it now
        assert _exchange(sock).startswith(b"HTTP/1.1 200")


def test_an_idle_kept_connection_is_closed_after_the_keep_alive_timeout(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    args = ["--keep-alive-timeout", "1"]
    with running_server(tmp_path_factory.mktemp("keep-alive"), args=args) as server:
        with _connect(server) as sock:
            assert _exchange(sock).startswith(b"HTTP/1.1 200")
            took = _closed_after(sock)
    # Closed by this setting (1 s), well before uvicorn's own 5 s would have.
    assert took < CLIENT_POOL / 2, f"the server kept the idle connection {took:.1f} s"
