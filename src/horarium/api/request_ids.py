"""Azure's request ids on every HTTP answer: `x-ms-request-id` (new for each request),
`x-ms-correlation-request-id` (the caller's, else the request id) and, when the caller sent one,
`x-ms-client-request-id` (its first 200 characters).

A pure ASGI middleware: it adds the headers to the answer's start message. (Starlette's
`BaseHTTPMiddleware` did the same through `call_next`, for about 0.6 ms of CPU a request:
docs/benchmarks.md, "Check-in monitors on SQLite".)"""

from __future__ import annotations

import uuid

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_CLIENT_ID = 200  # characters of x-ms-client-request-id echoed


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        asked = Headers(scope=scope)

        async def send_with_ids(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                request_id = str(uuid.uuid4())
                headers["x-ms-request-id"] = request_id
                headers["x-ms-correlation-request-id"] = asked.get(
                    "x-ms-correlation-request-id", request_id
                )
                client_id = asked.get("x-ms-client-request-id")
                if client_id:
                    headers["x-ms-client-request-id"] = client_id[:MAX_CLIENT_ID]
            await send(message)

        await self.app(scope, receive, send_with_ids)
