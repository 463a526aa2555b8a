"""The Host check: the API answers only requests addressed to a host name it is known by.

It stops DNS rebinding: a web page on evil.example whose name is re-pointed at 127.0.0.1 makes
the browser send requests to this service with `Host: evil.example`, which is refused here. It
applies to every path, the public documents included."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from horarium.api.wire import arm_error
from horarium.config import Settings

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(value: str) -> str:
    """A Host header value (or an address) without its port and brackets, lower-cased, without a
    final dot: `[::1]:8080` -> `::1`, `Example.COM.:443` -> `example.com`."""
    value = value.strip().lower()
    if value.startswith("["):
        value = value[1 : value.find("]")] if "]" in value else value[1:]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def allowed_hosts(settings: Settings) -> frozenset[str]:
    """`--allowed-hosts`, or by default the bind address, localhost, 127.0.0.1, ::1 and the host
    of `--public-url`."""
    given: Iterable[str] = settings.allowed_hosts
    if not given:
        given = [settings.host, *LOOPBACK_NAMES]
        if settings.public_url:
            given.append(urlsplit(settings.public_url).hostname or "")
    return frozenset(host_name(h) for h in given if host_name(h))


class HostCheck:
    """ASGI middleware: 400 `InvalidHost` for a request whose Host is not allowed."""

    def __init__(self, app: ASGIApp, *, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        values = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
        if len(values) == 1 and host_name(values[0]) in self.allowed:
            await self.app(scope, receive, send)
            return
        given = f"'{values[0][:100]}'" if len(values) == 1 else "missing or repeated"
        refusal = arm_error(
            400,
            "InvalidHost",
            f"The Host header {given} is not a name this service answers to; add the name to"
            " --allowed-hosts (HORARIUM_ALLOWED_HOSTS) or set --public-url.",
        )
        await refusal(scope, receive, send)
