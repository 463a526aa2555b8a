"""Real servers on 127.0.0.1 for the end-to-end tests, run in a background thread so that
synchronous tests can drive a `horarium serve` process meanwhile: a plain HTTP sink, an HTTPS
sink that requires a client certificate, and a stand-in for Azure AD's token endpoint."""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: str
    at: float  # time.time() on arrival
    client_subject: str | None = None  # TLS client certificate CN, when one was presented


@dataclass
class Recorder:
    """Records every request; `answer(path, *statuses)` sets what a path answers in turn (the
    last repeats; default 200); `slow(path, seconds)` delays a path's answer."""

    requests: list[Request] = field(default_factory=list)
    answers: dict[str, list[int]] = field(default_factory=dict)
    delays: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str, *statuses: int) -> None:
        self.answers[path] = list(statuses)

    def slow(self, path: str, seconds: float) -> None:
        self.delays[path] = seconds

    def on(self, path: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    async def handle(self, request: web.Request) -> web.Response:
        subject = None
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        if peer:
            subject = dict(x[0] for x in peer["subject"]).get("commonName")
        entry = Request(request.path, dict(request.headers), await request.text(), time.time())
        entry.client_subject = subject
        with self.lock:
            self.requests.append(entry)
        delay = self.delays.get(request.path, 0.0)
        if delay:
            await asyncio.sleep(delay)
        statuses = self.answers.get(request.path) or [200]
        status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
        return web.Response(status=status, text=f"{status} from {request.path}")


class FakeAzureAd:
    """Azure AD v1 token endpoint stand-in: POST /{tenant}/oauth2/token (client credentials)."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.issued: list[str] = []

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        if form.get("client_secret") != self.secret:
            return web.json_response({"error": "invalid_client"}, status=401)
        token = f"token-{len(self.issued) + 1}"
        self.issued.append(token)
        return web.json_response(
            {
                "token_type": "Bearer",
                "expires_in": "3599",
                "resource": str(form.get("resource")),
                "access_token": token,
            }
        )


class LiveServers:
    """Starts apps on a private event loop in a daemon thread; URLs come back synchronously."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._runners: list[web.AppRunner] = []
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, make: Callable[[], Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(30)

    def serve(self, app: web.Application, ssl_context: ssl.SSLContext | None = None) -> str:
        async def start() -> str:
            runner = web.AppRunner(app, shutdown_timeout=0.1)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
            await site.start()
            self._runners.append(runner)
            port = runner.addresses[0][1]
            return f"{'https' if ssl_context else 'http'}://127.0.0.1:{port}"

        return str(self._call(start))

    def sink(self, recorder: Recorder, ssl_context: ssl.SSLContext | None = None) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", recorder.handle)
        return self.serve(app, ssl_context)

    def azure_ad(self, aad: FakeAzureAd) -> str:
        app = web.Application()
        app.router.add_post("/{tenant}/oauth2/token", aad.token)
        return self.serve(app)

    def close(self) -> None:
        async def stop() -> None:
            for runner in self._runners:
                await runner.cleanup()
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        self._call(stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


@contextmanager
def listening(recorder: Recorder) -> Iterator[str]:
    """`recorder` answering on 127.0.0.1 for the block (LiveServers.sink); yields its URL."""
    servers = LiveServers()
    try:
        yield servers.sink(recorder)
    finally:
        servers.close()


def wait_until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.25) -> Any:
    """Poll until `check()` is truthy; returns its value. The timeout only bounds a hung test:
    it is generous, never what decides the outcome of a healthy run."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s")
        time.sleep(every)
