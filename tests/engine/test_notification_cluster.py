"""Two `horarium worker` processes on one PostgreSQL database deliver one collection's
notifications at once: 40 one-time jobs fault together (80 notifications, ExecutionFaulted and
JobFaulted each), the receiver answers 200, and each notification arrives exactly once, signed.

At least once is the guarantee (`docs/engine.md`, "Notifications"); a duplicate needs a lease
that ran out (`--http-timeout` + 60 s) or a process that died between the POST and its write,
and neither happens here. The receiver holds its answers until more requests wait on it than one
process can send at once (`actions.webhooks.CONNECTIONS`), so both processes are delivering at
the same time, or until a bound well inside the lease."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from horarium.actions.webhooks import CONNECTIONS
from tests.engine.cluster_support import (
    cluster,
    iso,
    log_lines,
    make_collection,
    put_jobs,
    stop_workers,
)
from tests.engine.live_servers import wait_until

pytestmark = pytest.mark.postgres

JOBS = 40
EVENTS = ["ExecutionFaulted", "JobFaulted"]
SECRET = "whsec-cluster-0123456789"
HOLD_SECONDS = 30.0  # the longest the receiver holds an answer (the lease is 60 s + 60 s)


class GatedReceiver:
    """/fail/… answers 500 (the jobs fault); /notify records the request and answers 200 once
    more than one process's worth of requests wait at once, or after HOLD_SECONDS."""

    def __init__(self) -> None:
        self.notifications: list[bytes] = []
        self.signatures: list[str] = []
        self.waiting = 0
        self.most_waiting = 0
        self.open = threading.Event()
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                status = 500
                if self.path == "/notify":
                    with lock:
                        outer.notifications.append(body)
                        outer.signatures.append(self.headers.get("x-horarium-signature", ""))
                        outer.waiting += 1
                        outer.most_waiting = max(outer.most_waiting, outer.waiting)
                        if outer.waiting > CONNECTIONS:
                            outer.open.set()
                    outer.open.wait(HOLD_SECONDS)
                    with lock:
                        outer.waiting -= 1
                    status = 200
                self.send_response(status)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.open.set()
        self.server.shutdown()
        self.server.server_close()


def _failing(uri: str, start: datetime) -> dict[str, Any]:
    """A one-time job at `start` whose one attempt fails (the receiver answers 500)."""
    action = {
        "type": "Http",
        "request": {"uri": uri, "method": "POST"},
        "retryPolicy": {"retryType": "None"},
    }
    return {"action": action, "startTime": iso(start)}


def _outbox(database: str) -> int:
    """The notifications not settled yet."""

    async def count() -> int:
        conn = await asyncpg.connect(database)
        try:
            return int(await conn.fetchval("SELECT count(*) FROM notifications"))
        finally:
            await conn.close()

    return asyncio.run(count())


@pytest.fixture
def receiver() -> Iterator[GatedReceiver]:
    found = GatedReceiver()
    yield found
    found.close()


def test_two_workers_deliver_each_notification_exactly_once(
    tmp_path: Path, receiver: GatedReceiver
) -> None:
    with cluster(tmp_path, 2) as nodes:
        http = nodes.http
        notification = {"events": EVENTS, "uri": f"{receiver.url}/notify", "secret": SECRET}
        make_collection(http, notifications=[notification])
        nodes.start_workers()
        start = datetime.now(UTC) + timedelta(seconds=10)  # both workers up by then
        names = [f"job{i:02d}" for i in range(JOBS)]
        put_jobs(http, {n: _failing(f"{receiver.url}/fail/{n}", start) for n in names})

        expected = len(names) * len(EVENTS)
        wait_until(lambda: len(receiver.notifications) >= expected, 180, "every notification")
        # Every row settled: a duplicate, if any, was sent before its row went.
        wait_until(lambda: _outbox(nodes.database) == 0, 120, "the outbox to empty")
        bodies = [json.loads(b) for b in receiver.notifications]
        for raw, signature in zip(receiver.notifications, receiver.signatures, strict=True):
            digest = hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
            assert signature == f"sha256={digest}"
        ids = Counter(b["id"] for b in bodies)
        assert [i for i, n in ids.items() if n > 1] == [], "a notification arrived twice"
        told = sorted((b["job"], b["event"]) for b in bodies)
        assert told == sorted((n, e) for n in names for e in EVENTS)
        assert receiver.most_waiting > CONNECTIONS, (
            f"at most {receiver.most_waiting} deliveries waited at once: one process"
        )
        assert stop_workers(nodes.workers) == [0, 0]
    assert log_lines(nodes.logs, "notification", "Traceback", "deadlock") == []
