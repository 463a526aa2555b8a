"""OpenID Connect: JWTs from one issuer, checked against the issuer's published keys."""

from __future__ import annotations

from horarium.api.principal import Principal


class OidcVerifier:
    """Verifies bearer JWTs of one issuer (discovery document, JWKS cached and refreshed on an
    unknown `kid`); `verify` returns the caller or raises `AuthenticationError`."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        subscriptions_claim: str = "subscriptions",
        role_claim: str = "role",
        timeout: float = 10.0,
    ) -> None:
        self.issuer = issuer
        self.audience = audience
        self.subscriptions_claim = subscriptions_claim
        self.role_claim = role_claim
        self.timeout = timeout

    async def verify(self, token: str) -> Principal:
        raise NotImplementedError

    async def close(self) -> None:
        """Release the HTTP client used for discovery and key fetches."""
