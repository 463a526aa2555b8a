"""Helpers of the secrets tests: servers on 127.0.0.1 that record what arrived and echo it back
(so that history messages would carry every secret sent, were they not masked), an Azure AD
token endpoint stand-in, the bytes a database holds, and `horarium` processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web
from sqlalchemy import inspect, text
from sqlalchemy.ext.asyncio import AsyncConnection

from horarium.store.core.db import create_engine
from tests import forkserver
from tests.actions.tls_material import Pki, make_pki
from tests.api.api_client import Api, error_of
from tests.engine.live_servers import LiveServers, Recorder, wait_until

# A one-time job due in 2099 runs only when asked (POST …/run): the tests' jobs are such.
FAR_FUTURE = "2099-01-01T00:00:00Z"

__all__ = ["Api", "LiveServers", "Pki", "Recorder", "error_of", "make_pki", "wait_until"]

API_VERSION = "2016-03-01"
# Headers every request carries; the echo leaves them out so that the rest fits in history.
_ROUTINE = ("host", "accept", "accept-encoding", "user-agent", "content-length", "content-type")


@dataclass
class Arrival:
    url: str  # with its query, as received
    headers: dict[str, str]
    body: str


@dataclass
class Echo:
    """Records every request; answers with its URL and headers in the body (status from
    `answers`, default 200). A Storage queue's `POST …/messages` is answered as the queue service
    does, with the request's URL as the message id."""

    arrivals: dict[str, list[Arrival]] = field(default_factory=dict)
    answers: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, path: str) -> list[Arrival]:
        with self.lock:
            return list(self.arrivals.get(path, []))

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.text()
        arrival = Arrival(str(request.url), dict(request.headers), body)
        with self.lock:
            self.arrivals.setdefault(request.path, []).append(arrival)
        if request.path.endswith("/messages") and request.method == "POST":
            return web.Response(status=201, text=_queue_answer(arrival.url))
        shown = {
            k: v
            for k, v in request.headers.items()
            if k.lower() not in _ROUTINE and not k.lower().startswith("x-ms-")
        }
        echo = f"{request.method} {arrival.url} {shown}"
        return web.Response(status=self.answers.get(request.path, 200), text=echo)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app


def _queue_answer(message_id: str) -> str:
    when = "Mon, 01 Jan 2024 00:00:00 GMT"
    escaped = message_id.replace("&", "&amp;")
    return (
        '<?xml version="1.0" encoding="utf-8"?><QueueMessagesList><QueueMessage>'
        f"<MessageId>{escaped}</MessageId><InsertionTime>{when}</InsertionTime>"
        f"<ExpirationTime>{when}</ExpirationTime><PopReceipt>r</PopReceipt>"
        f"<TimeNextVisible>{when}</TimeNextVisible></QueueMessage></QueueMessagesList>"
    )


@dataclass
class TokenAuthority:
    """Azure AD v1 token endpoint stand-in: issues a new, distinct token for the right secret."""

    secret: str
    issued: list[str] = field(default_factory=list)
    secrets_seen: list[str] = field(default_factory=list)

    async def token(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.secrets_seen.append(str(form.get("client_secret")))
        if form.get("client_secret") != self.secret:
            return web.json_response({"error": "invalid_client"}, status=401)
        token = f"aad-token-{uuid.uuid4().hex}"
        self.issued.append(token)
        return web.json_response(
            {"token_type": "Bearer", "expires_in": "3599", "access_token": token}
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{tenant}/oauth2/token", self.token)
        return app


def database_bytes(url: str) -> bytes:
    """Everything the database holds, as bytes: a SQLite file with its -wal and -shm files
    read raw; on PostgreSQL, every row of every table as text."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        files = [path, *(path.with_name(path.name + end) for end in ("-wal", "-shm"))]
        return b"".join(f.read_bytes() for f in files if f.exists())
    return asyncio.run(_pg_rows(url))


async def _pg_rows(url: str) -> bytes:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            tables = await conn.run_sync(lambda c: inspect(c).get_table_names())
            return b"\n".join([await _table_text(conn, table) for table in tables])
    finally:
        await engine.dispose()


async def _table_text(conn: AsyncConnection, table: str) -> bytes:
    rows = await conn.execute(text(f'SELECT t::text FROM "{table}" t'))
    return "\n".join(row[0] for row in rows).encode()


def horarium(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`horarium ARGS` as a process of its own; its output and exit code."""
    return forkserver.run(
        [sys.executable, "-m", "horarium.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )
