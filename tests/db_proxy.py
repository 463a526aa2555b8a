"""A TCP proxy on 127.0.0.1 in front of the test PostgreSQL, to stage database outages without
touching the shared server: `cut()` closes every connection through it and refuses new ones
(its port is closed), `restore()` listens on the same port again.

    with DatabaseProxy(5432) as proxy:
        url = f"postgresql://postgres@127.0.0.1:{proxy.port}/{name}"
        ...
        proxy.cut()      # the database is unreachable: connections drop, new ones are refused
        proxy.restore()  # reachable again
        proxy.freeze()   # a silent partition: connections stay open, no byte gets through
        proxy.thaw()     # the network heals: what was held goes through, in order
"""

from __future__ import annotations

import selectors
import socket
import threading
from collections.abc import Iterator
from types import TracebackType

import pytest
from sqlalchemy.engine import make_url

from tests.support import free_port, fresh_pg_database


class DatabaseProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._closed = False
        self._flowing = threading.Event()  # cleared: bytes are held, nothing is said
        self._flowing.set()

    def __enter__(self) -> DatabaseProxy:
        self.restore()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self._closed = True
        self.cut()

    def restore(self) -> None:
        """Listen (again) on `port`, forwarding every connection to the database."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self._listener = listener
        self._accepting = threading.Thread(target=self._accept, args=(listener,), daemon=True)
        self._accepting.start()

    def cut(self) -> None:
        """Stop listening (new connections are refused) and close every open connection."""
        listener, self._listener = self._listener, None
        if listener is not None:
            try:
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        if self._accepting is not None:
            self._accepting.join(5)
            self._accepting = None
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for sock in pair:
                _close(sock)

    def freeze(self) -> None:
        """Hold every byte both ways (new connections are accepted and held too), as a network
        that drops packets silently: neither side hears anything, nothing is closed."""
        self._flowing.clear()

    def thaw(self) -> None:
        """Let the held bytes, and everything after them, through again."""
        self._flowing.set()

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._pairs.append((client, server))
            threading.Thread(target=self._pipe, args=(client, server), daemon=True).start()

    def _pipe(self, client: socket.socket, server: socket.socket) -> None:
        """Copy bytes both ways until either side closes."""
        selector = selectors.DefaultSelector()
        selector.register(client, selectors.EVENT_READ, server)
        selector.register(server, selectors.EVENT_READ, client)
        try:
            while True:
                self._flowing.wait()
                for key, _ in selector.select(timeout=0.05):
                    if not self._flowing.is_set():
                        break  # frozen: leave the bytes where they are
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = source.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
        except (OSError, ValueError):
            return
        finally:
            selector.close()
            for sock in (client, server):
                _close(sock)
            with self._lock:
                if (client, server) in self._pairs:
                    self._pairs.remove((client, server))


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


@pytest.fixture
def proxied_database() -> Iterator[tuple[str, DatabaseProxy]]:
    """A fresh PostgreSQL database reached through a `DatabaseProxy`: its URL and the proxy.
    A test module takes it with `from tests.db_proxy import proxied_database as
    proxied_database`."""
    with fresh_pg_database() as url, DatabaseProxy(5432) as proxy:
        through = make_url(url).set(host="127.0.0.1", port=proxy.port)
        yield through.render_as_string(hide_password=False), proxy
