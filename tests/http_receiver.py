"""A real HTTP server on 127.0.0.1 that records the requests it is sent (by jobs, or as
notifications), answering each with the status `answer` gives."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (path, how many requests that path has had, this one included) -> the status to answer
Answer = Callable[[str, int], int]


def always_ok(path: str, seen: int) -> int:
    return 200


class Receiver:
    """`address`: where it listens (default: a free port on 127.0.0.1)."""

    def __init__(
        self, answer: Answer = always_ok, *, address: tuple[str, int] = ("127.0.0.1", 0)
    ) -> None:
        self.received: list[dict[str, Any]] = []
        received = self.received
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with lock:
                    received.append(
                        {
                            "path": self.path,
                            "headers": dict(self.headers),
                            "authorization": self.headers.get("authorization"),
                            "signature": self.headers.get("x-horarium-signature"),
                            "body": body,
                        }
                    )
                    seen = sum(1 for r in received if r["path"] == self.path)
                self.send_response(answer(self.path, seen))
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(address, Handler)
        self.base_url = f"http://{address[0]}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def requests_to(self, path: str) -> list[dict[str, Any]]:
        return [r for r in list(self.received) if r["path"] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
