"""ActiveDirectoryOAuth: client-credentials tokens from Azure AD, cached until they expire.

The scheduler's job shape (`tenant`, `audience`, `clientId`, `secret`) is the Azure AD v1
client-credentials request: POST {authority}/{tenant}/oauth2/token with `resource=audience`.
One token request per (authority, tenant, client, audience, secret) until the token is within a
minute of expiring; concurrent runs wait for the same request. `recent` tells the runner which
tokens to mask in history (an endpoint may echo the Authorization header it received).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from urllib.parse import quote

import aiohttp

EXPIRY_MARGIN = 60.0  # seconds before expiry at which a cached token is renewed


class TokenError(Exception):
    """The token endpoint refused or could not be reached; the text says what it answered."""


@dataclass(frozen=True)
class _Token:
    value: str
    renew_at: float  # time.monotonic()


def _key(tenant: str, audience: str, client_id: str, secret: str) -> bytes:
    return hashlib.sha256("\0".join((tenant, audience, client_id, secret)).encode()).digest()


class TokenCache:
    def __init__(self, session: aiohttp.ClientSession, authority: str, timeout: float) -> None:
        self._session = session
        self._authority = authority.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._tokens: dict[bytes, _Token] = {}
        self._replaced: dict[bytes, str] = {}  # the token before the current one
        self._locks: dict[bytes, asyncio.Lock] = {}

    def recent(self, tenant: str, audience: str, client_id: str, secret: str) -> list[str]:
        """The tokens lately obtained for these credentials (the current one and the one it
        replaced: an attempt that started before a renewal sent that one)."""
        key = _key(tenant, audience, client_id, secret)
        found = [self._replaced.get(key), getattr(self._tokens.get(key), "value", None)]
        return [token for token in found if token]

    async def token(self, tenant: str, audience: str, client_id: str, secret: str) -> str:
        key = _key(tenant, audience, client_id, secret)
        cached = self._tokens.get(key)
        if cached and time.monotonic() < cached.renew_at:
            return cached.value
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            cached = self._tokens.get(key)
            if cached and time.monotonic() < cached.renew_at:
                return cached.value
            fresh = await self._request(tenant, audience, client_id, secret)
            if cached is not None:
                self._replaced[key] = cached.value
            self._tokens[key] = fresh
            return fresh.value

    async def _request(self, tenant: str, audience: str, client_id: str, secret: str) -> _Token:
        url = f"{self._authority}/{quote(tenant, safe='')}/oauth2/token"
        form = {
            "grant_type": "client_credentials",
            "client_id": client_id,
            "client_secret": secret,
            "resource": audience,
        }
        started = time.monotonic()
        try:
            async with self._session.post(
                url, data=form, timeout=self._timeout, allow_redirects=False
            ) as response:
                try:
                    payload = await response.json(content_type=None)
                except ValueError:
                    payload = None
                status = response.status
        except TimeoutError as exc:
            raise TokenError(f"token request to '{url}' timed out") from exc
        except aiohttp.ClientError as exc:
            raise TokenError(f"token request to '{url}' failed: {exc}") from exc
        if status != 200 or not isinstance(payload, dict) or "access_token" not in payload:
            detail = ""
            if isinstance(payload, dict):
                detail = " ".join(
                    str(payload[k]) for k in ("error", "error_description") if k in payload
                )
            raise TokenError(
                f"token endpoint '{url}' answered {status}{': ' + detail if detail else ''}"
            )
        try:
            lifetime = float(payload.get("expires_in", 3600))
        except (TypeError, ValueError):
            lifetime = 3600.0
        renew_at = started + max(lifetime - EXPIRY_MARGIN, lifetime / 2)
        return _Token(str(payload["access_token"]), renew_at)
