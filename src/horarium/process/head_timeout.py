"""uvicorn's h11 protocol with a bound on how long a request's head (its request line and
headers) may take to arrive. uvicorn closes a keep-alive connection left idle, but not one on
which a request has begun and its headers trickle in a byte at a time (slowloris): each such
connection held a socket and a protocol object for as long as the client liked. With this
protocol the connection is closed once `seconds` pass between the first byte of a request and
the end of its headers."""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class HeadTimeout(H11Protocol):
    """`H11Protocol`, closing a connection whose request head takes longer than `seconds`."""

    seconds: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._timed: object = None  # the request cycle under way when the timer was set

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_timer()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._start_head_timer()  # the first bytes of the next request on this connection
        super().data_received(data)
        if self.cycle is not self._timed:
            self._stop_head_timer()  # its head arrived: the request runs

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def _start_head_timer(self) -> None:
        self._timed = self.cycle
        self._head_timer = self.loop.call_later(self.seconds, self._head_too_slow)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def with_head_timeout(seconds: float) -> type[HeadTimeout]:
    """The protocol class uvicorn takes (`http=`), with `seconds` as its bound."""
    return type("HeadTimeout", (HeadTimeout,), {"seconds": seconds})
