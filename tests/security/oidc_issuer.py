"""A real OpenID Connect issuer for tests: discovery document and JWKS served by aiohttp on
127.0.0.1, RSA and EC keys made with `cryptography`, tokens minted here."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from tests.support import free_port

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


@dataclass
class IssuerKey:
    kid: str
    alg: str
    private: PrivateKey

    @classmethod
    def rsa(cls, kid: str) -> IssuerKey:
        return cls(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))

    @classmethod
    def ec(cls, kid: str) -> IssuerKey:
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        if isinstance(public, rsa.RSAPublicKey):
            entry = RSAAlgorithm.to_jwk(public, as_dict=True)
        else:
            entry = ECAlgorithm.to_jwk(public, as_dict=True)
        return {**entry, "kid": self.kid, "use": "sig", "alg": self.alg}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )


@dataclass
class OidcIssuer:
    """Serves `<url>/.well-known/openid-configuration` and `<url>/keys` while started; `keys`
    is what the JWKS publishes (change it to rotate); counts the requests it answers."""

    path: str = "/tenant-a/v2.0"
    port: int = field(default_factory=free_port)
    keys: list[IssuerKey] = field(default_factory=list)
    discovery_issuer: str | None = None  # the issuer the discovery document names (default: url)
    discovery_requests: int = 0
    jwks_requests: int = 0
    _runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get(f"{self.path}/.well-known/openid-configuration", self._discovery)
        app.router.add_get(f"{self.path}/keys", self._jwks)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _discovery(self, request: web.Request) -> web.Response:
        self.discovery_requests += 1
        return web.json_response(
            {
                "issuer": self.discovery_issuer or self.url,
                "jwks_uri": f"{self.url}/keys",
                "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            }
        )

    async def _jwks(self, request: web.Request) -> web.Response:
        self.jwks_requests += 1
        return web.json_response({"keys": [key.jwk() for key in self.keys]})

    def claims(self, now: float, audience: str, **overrides: Any) -> dict[str, Any]:
        """A valid payload issued at `now`; an override of None leaves that claim out."""
        claims: dict[str, Any] = {
            "iss": self.url,
            "aud": audience,
            "sub": "user-1",
            "iat": int(now),
            "nbf": int(now),
            "exp": int(now) + 3600,
            "subscriptions": ["Sub-A"],
            "role": "contributor",
        }
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    @staticmethod
    def mint(key: IssuerKey, claims: dict[str, Any], **header: Any) -> str:
        """A token signed with `key` (header: extra fields, another kid, or kid=None: none)."""
        fields = {name: value for name, value in {"kid": key.kid, **header}.items() if value}
        return jwt.encode(claims, key.private, algorithm=key.alg, headers=fields)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned_token(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A JWT with any header (alg none, HS256, ...) and the given signature bytes."""
    head = _b64(json.dumps(header).encode())
    body = _b64(json.dumps(claims).encode())
    return f"{head}.{body}.{_b64(signature)}"


def hs256_token(secret: bytes, claims: dict[str, Any], kid: str) -> str:
    """A token HMAC-signed with `secret` (the classic attack: the issuer's public key as secret)."""
    header = {"alg": "HS256", "typ": "JWT", "kid": kid}
    signing_input = unsigned_token(header, claims).rsplit(".", 1)[0]
    signature = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{_b64(signature)}"
