"""An OpenID Connect issuer's signing keys: discovery, JWKS fetch, cache and refresh policy."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from cryptography.hazmat.primitives.asymmetric.ec import (
    EllipticCurvePrivateKey,
    EllipticCurvePublicKey,
)
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey, RSAPublicKey
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from jwt.exceptions import PyJWTError

from horarium.loopback import is_loopback

log = logging.getLogger(__name__)

# Signature algorithms a token may use; symmetric (HS*) and `none` never.
ALLOWED_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
)
_CURVE_OF = {"ES256": "secp256r1", "ES384": "secp384r1", "ES512": "secp521r1"}
MIN_RSA_BITS = 2048
MAX_DOCUMENT_BYTES = 1 << 20  # discovery document or key set
DISCOVERY_PATH = "/.well-known/openid-configuration"

PublicKey = RSAPublicKey | EllipticCurvePublicKey


class IssuerError(Exception):
    """The issuer's discovery document or key set could not be fetched or is unusable; the text
    says why (for the operator's log)."""


def check_transport(url: str) -> None:
    """Refuse a URL that is not https, unless it is http to a loopback address."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return
    if parts.scheme == "http" and parts.hostname and is_loopback(parts.hostname):
        return
    raise ValueError(
        f"'{url}' must be an https URL (plain http only to a loopback address): the signing"
        " keys fetched from it decide who may call the API"
    )


@dataclass(frozen=True)
class SigningKey:
    """One public key of the issuer's key set."""

    kid: str | None
    key: PublicKey
    alg: str | None  # the algorithm the key set pins it to, if it names one

    def fits(self, alg: str) -> bool:
        """Whether a token signed with `alg` may be checked with this key."""
        if alg not in ALLOWED_ALGORITHMS or (self.alg is not None and self.alg != alg):
            return False
        if alg.startswith(("RS", "PS")):
            return isinstance(self.key, RSAPublicKey)
        curve = _CURVE_OF[alg]
        return isinstance(self.key, EllipticCurvePublicKey) and self.key.curve.name == curve


def parse_key_set(document: dict[str, Any]) -> list[SigningKey]:
    """The usable signature keys of a JWKS document: RSA (at least 2048 bits) and EC keys whose
    `use` is absent or `sig`; symmetric and unknown keys are left out."""
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise IssuerError("the key set has no 'keys' list")
    keys = [key for entry in entries if (key := _signing_key(entry)) is not None]
    if not keys:
        raise IssuerError("the key set holds no usable RSA or EC signature key")
    return keys


def _signing_key(entry: object) -> SigningKey | None:
    if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
        return None
    public = _public_key(entry)
    if public is None:
        return None
    if isinstance(public, RSAPublicKey) and public.key_size < MIN_RSA_BITS:
        return None
    kid, alg = entry.get("kid"), entry.get("alg")
    return SigningKey(
        kid=kid if isinstance(kid, str) else None,
        key=public,
        alg=alg if isinstance(alg, str) else None,
    )


def _public_key(entry: dict[str, Any]) -> PublicKey | None:
    kty = entry.get("kty")
    try:
        if kty == "RSA":
            rsa = RSAAlgorithm.from_jwk(entry)
            return rsa.public_key() if isinstance(rsa, RSAPrivateKey) else rsa
        if kty == "EC":
            ec = ECAlgorithm.from_jwk(entry)
            return ec.public_key() if isinstance(ec, EllipticCurvePrivateKey) else ec
    except (PyJWTError, ValueError, TypeError, KeyError):
        log.warning("OpenID Connect: a %s key of the issuer's key set is malformed; skipped", kty)
    return None


class IssuerKeys:
    """The signing keys of one issuer: fetched (discovery, then `jwks_uri`) on first use, again
    when older than `max_age`, and at once when a token names an unknown `kid` — at most once per
    `cooldown` for unknown kids; concurrent callers share one fetch."""

    def __init__(
        self,
        issuer: str,
        *,
        timeout: float,
        cooldown: float,
        max_age: float,
        clock: Callable[[], float],
    ) -> None:
        self._issuer = issuer
        self._discovery_url = issuer.rstrip("/") + DISCOVERY_PATH
        self._timeout = timeout
        self._cooldown = cooldown
        self._max_age = max_age
        self._clock = clock
        self._keys: list[SigningKey] | None = None
        self._fetched_at = 0.0
        self._attempted_at: float | None = None  # last fetch started, for any reason
        self._unknown_kid_at: float | None = None  # last fetch started for an unknown kid
        self._fetch: asyncio.Task[list[SigningKey]] | None = None
        self._session: aiohttp.ClientSession | None = None

    async def find(self, kid: str | None) -> SigningKey | None:
        """The key named `kid` (without a kid: the only key), or None when the issuer has none;
        raises IssuerError when the keys are needed and cannot be fetched."""
        if self._keys is None:
            return _pick(await self._fetched(), kid)
        if self._stale():
            return await self._find_after_refresh(kid, self._keys)
        key = _pick(self._keys, kid)
        if key is not None or not self._may_fetch_for_unknown_kid():
            return key
        return _pick(await self._fetched(), kid)

    async def close(self) -> None:
        if self._fetch is not None:
            self._fetch.cancel()
            await asyncio.gather(self._fetch, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _stale(self) -> bool:
        now = self._clock()
        return now - self._fetched_at >= self._max_age and _elapsed(
            self._attempted_at, now, self._cooldown
        )

    def _may_fetch_for_unknown_kid(self) -> bool:
        """A fetch under way is joined; a new one only once per cooldown."""
        if self._fetch is not None:
            return True
        now = self._clock()
        if not _elapsed(self._unknown_kid_at, now, self._cooldown):
            return False
        self._unknown_kid_at = now
        return True

    async def _find_after_refresh(
        self, kid: str | None, cached: list[SigningKey]
    ) -> SigningKey | None:
        """The key from a fresh key set; if the fetch fails, from the cached one (the failure is
        logged), and IssuerError only when the cached set lacks it too."""
        try:
            return _pick(await self._fetched(), kid)
        except IssuerError:
            key = _pick(cached, kid)
            if key is None:
                raise
            return key

    async def _fetched(self) -> list[SigningKey]:
        """The keys from a fetch: the one under way, else a new one."""
        if self._fetch is None:
            self._attempted_at = self._clock()
            self._fetch = asyncio.create_task(self._fetch_and_keep())
            self._fetch.add_done_callback(self._fetch_done)
        return await asyncio.shield(self._fetch)

    def _fetch_done(self, task: asyncio.Task[list[SigningKey]]) -> None:
        self._fetch = None
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("OpenID Connect: cannot fetch the keys of %s: %s", self._issuer, error)

    async def _fetch_and_keep(self) -> list[SigningKey]:
        keys = await self._fetch_keys()
        self._keys, self._fetched_at = keys, self._clock()
        return keys

    async def _fetch_keys(self) -> list[SigningKey]:
        discovery = await self._get_json(self._discovery_url, "discovery document")
        named = discovery.get("issuer")
        if named != self._issuer:
            raise IssuerError(
                f"the discovery document at {self._discovery_url} names issuer {named!r},"
                f" not the configured {self._issuer!r}"
            )
        jwks_uri = discovery.get("jwks_uri")
        if not isinstance(jwks_uri, str) or not jwks_uri:
            raise IssuerError(f"the discovery document at {self._discovery_url} has no jwks_uri")
        try:
            check_transport(jwks_uri)
        except ValueError as exc:
            raise IssuerError(f"jwks_uri {exc}") from None
        return parse_key_set(await self._get_json(jwks_uri, "key set"))

    async def _get_json(self, url: str, what: str) -> dict[str, Any]:
        try:
            async with self._client().get(url, headers={"Accept": "application/json"}) as answer:
                if answer.status != 200:
                    raise IssuerError(f"the {what} at {url} answered HTTP {answer.status}")
                body = await _read_limited(answer, url, what)
        except TimeoutError:
            raise IssuerError(f"the {what} at {url}: no answer within {self._timeout} s") from None
        except aiohttp.ClientError as exc:
            raise IssuerError(f"the {what} at {url}: {exc}") from None
        try:
            document = json.loads(body)
        except ValueError:
            raise IssuerError(f"the {what} at {url} is not JSON") from None
        if not isinstance(document, dict):
            raise IssuerError(f"the {what} at {url} is not a JSON object")
        return document

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self._timeout)
            )
        return self._session


async def _read_limited(answer: aiohttp.ClientResponse, url: str, what: str) -> bytes:
    body = bytearray()
    async for chunk in answer.content.iter_chunked(64 * 1024):
        body += chunk
        if len(body) > MAX_DOCUMENT_BYTES:
            raise IssuerError(f"the {what} at {url} is larger than {MAX_DOCUMENT_BYTES} bytes")
    return bytes(body)


def _pick(keys: list[SigningKey], kid: str | None) -> SigningKey | None:
    if kid is None:
        return keys[0] if len(keys) == 1 else None
    return next((key for key in keys if key.kid == kid), None)


def _elapsed(since: float | None, now: float, interval: float) -> bool:
    """Whether `interval` has passed since `since` (a clock set back counts as passed)."""
    return since is None or not 0 <= now - since < interval
