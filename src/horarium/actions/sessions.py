"""The outbound HTTP session actions and notifications send through: it obeys the outbound
policy (denied addresses dropped from every DNS answer, IP literals checked as the socket
opens), trusts the system's store, and keeps no cookies (a cookie one endpoint sets must not
reach another's request)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp
from aiohttp.abc import AbstractResolver

from horarium.actions.outbound import OutboundPolicy, PolicyResolver, guarded_socket
from horarium.actions.tls import default_context


@asynccontextmanager
async def guarded_session(
    policy: OutboundPolicy, connections: int, dns: AbstractResolver | None = None
) -> AsyncIterator[aiohttp.ClientSession]:
    """A session of at most `connections` at once under `policy`; `dns`: the resolver behind
    the policy (default: aiohttp's own). Closed, with its resolver, on leaving."""
    tls = await asyncio.to_thread(default_context)  # reads the trust store from disk
    resolver = PolicyResolver(policy, dns)
    connector = aiohttp.TCPConnector(
        ssl=tls, limit=connections, resolver=resolver, socket_factory=guarded_socket(policy)
    )
    session = aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())
    try:
        yield session
    finally:
        await session.close()
        await resolver.close()
