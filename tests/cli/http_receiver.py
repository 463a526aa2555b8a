"""A real HTTP server on 127.0.0.1 that records the requests jobs send it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT_SECONDS = 60.0


class Receiver:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                received.append(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("authorization"),
                        "signature": self.headers.get("x-horarium-signature"),
                        "body": body,
                    }
                )
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        return [r for r in self.received if r["path"] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for(check: Callable[[], Any], what: str) -> Any:
    """`check()` once it is truthy; fails after WAIT_SECONDS (a bound, not a measurement)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not seen in {WAIT_SECONDS} s")
