"""The `--metrics-port` listener: the probes app (`horarium.api.probes.create_probe_app`) served
by uvicorn inside the process's running event loop, next to the scheduler (and the API)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator, Sequence

import uvicorn
from fastapi import FastAPI


class _InLoopServer(uvicorn.Server):
    """A uvicorn server that leaves signals to the process it runs in (which stops it)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class ProbeServer:
    def __init__(self, app: FastAPI, sockets: Sequence[socket.socket]) -> None:
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_config=None,
            log_level=None,
            access_log=False,
            server_header=False,
        )
        self._server = _InLoopServer(config)
        self._sockets = list(sockets)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(
            self._server.serve(sockets=self._sockets), name="horarium-probes"
        )

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
            self._task = None
