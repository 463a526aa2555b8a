"""An HTTP/1.1 server written on raw sockets that shows exactly what a client sent on each
keep-alive connection (the request-framing tests)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


@dataclass
class Seen:
    """One request as a server that honours Transfer-Encoding over Content-Length read it."""

    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes

    def has(self, name: str) -> bool:
        return any(key.lower() == name.lower() for key, _ in self.headers)


@dataclass
class RawHttpServer:
    """HTTP/1.1 on asyncio streams, no HTTP library: every request of a connection is parsed
    as RFC 9112 says (chunked wins over Content-Length) and answered 200, keeping the
    connection open. A body that smuggles a second request therefore shows up as a second
    request on the same connection."""

    url: str = ""
    connections: list[list[Seen]] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)

    @property
    def requests(self) -> list[Seen]:
        return [seen for connection in self.connections for seen in connection]

    def smuggling(self) -> list[str]:
        """What a front end sharing this connection would have been fooled by."""
        found = [
            f"both Content-Length and Transfer-Encoding on {seen.method} {seen.target}"
            for seen in self.requests
            if seen.has("Content-Length") and seen.has("Transfer-Encoding")
        ]
        found += [f"{s.method} {s.target}, never sent" for s in self.requests if "smug" in s.target]
        return found + self.malformed

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen: list[Seen] = []
        self.connections.append(seen)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                seen.append(request)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (ValueError, asyncio.IncompleteReadError) as exc:
            self.malformed.append(f"unreadable request: {exc}")
        finally:
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> Seen | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if exc.partial.strip():
                raise
            return None  # the client closed the connection between requests
        lines = head.decode("latin-1").split("\r\n")
        method, target, _version = lines[0].split(" ", 2)
        headers = [
            (name.strip(), value.strip())
            for name, _, value in (line.partition(":") for line in lines[1:] if line)
        ]
        values = {name.lower(): value for name, value in headers}
        if "chunked" in values.get("transfer-encoding", "").lower():
            body = await _read_chunked(reader)
        else:
            body = await reader.readexactly(int(values.get("content-length", "0")))
        return Seen(method, target, headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = b""
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers, then the end
                pass
            return body
        body += await reader.readexactly(size)
        await reader.readexactly(2)


@asynccontextmanager
async def raw_http_server() -> AsyncIterator[RawHttpServer]:
    """A `RawHttpServer` listening on 127.0.0.1 (a free port) for the block."""
    raw = RawHttpServer()
    server = await asyncio.start_server(raw.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    raw.url = f"http://127.0.0.1:{port}"
    try:
        yield raw
    finally:
        server.close()
        await server.wait_closed()
