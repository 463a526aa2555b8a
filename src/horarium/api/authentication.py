"""Who is calling: every management request names its caller with `Authorization: Bearer
<token>`, a Horarium API key or, when an OpenID Connect issuer is configured, a JWT of it.

A pure ASGI middleware rather than a FastAPI dependency: it runs before routing, so every path
but the public documents (/openapi.json, /docs) and check-ins (/ping/…) needs a caller, also
paths that match no route (a 404 tells nothing to a stranger) and requests FastAPI would reject
as malformed first. A refusal is 401 with `WWW-Authenticate: Bearer` and ARM's
`AuthenticationFailed` error; the caller, once known, is at `scope["state"]["principal"]`
(`request.state.principal`) for authorization and the audit log. The token itself is never
logged nor repeated in an answer."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Receive, Scope, Send

from horarium.api import api_keys
from horarium.api.principal import ALL_SUBSCRIPTIONS, AuthenticationError, Principal, Role
from horarium.api.wire import arm_error
from horarium.store.resources.access import Store

if TYPE_CHECKING:  # imported where a verifier is made: JWT and aiohttp only then
    from horarium.api.oidc import OidcVerifier

# The caller of every request when authentication is off (`--auth none`).
ANONYMOUS = Principal("anonymous", frozenset({ALL_SUBSCRIPTIONS}), Role.CONTRIBUTOR)


def bearer_token(authorization: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header value."""
    if authorization is None:
        raise AuthenticationError(
            "Authentication failed. The 'Authorization' header is missing (send"
            " 'Authorization: Bearer <token>' with an API key from 'horarium keys create')."
        )
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise AuthenticationError(
            "Authentication failed. The 'Authorization' header is not a bearer token"
            " (expected 'Bearer <token>')."
        )
    return token


class Authenticator:
    """Resolves a request's Authorization header to its caller (`authenticate`), or raises
    `AuthenticationError`. `open` gives it the store (and the OpenID Connect verifier, if any)
    at start-up; until then every request is refused."""

    def __init__(self) -> None:
        self._store: Store | None = None
        self._oidc: OidcVerifier | None = None

    def open(self, store: Store, oidc: OidcVerifier | None) -> None:
        self._store, self._oidc = store, oidc

    async def close(self) -> None:
        oidc, self._oidc = self._oidc, None
        if oidc is not None:
            await oidc.close()

    async def authenticate(self, authorization: str | None) -> Principal:
        token = bearer_token(authorization)
        if self._store is None:
            raise AuthenticationError("Authentication failed. The service is not ready.")
        if api_keys.is_api_key(token):
            async with self._store.read() as conn:
                return await api_keys.caller(conn, token, datetime.now(UTC))
        if self._oidc is None:
            raise AuthenticationError(
                "Authentication failed. The bearer token is not an API key (they start with"
                f" '{api_keys.TOKEN_PREFIX}') and this service accepts no OpenID Connect tokens"
                " (--oidc-issuer is not set)."
            )
        return await self._oidc.verify(token)


class Authentication:
    """ASGI middleware: a caller for every http request outside `public_paths` and the paths
    that start with one of `public_prefixes` (check-ins: their token is their credential).
    `authenticator` None (`--auth none`): every caller is ANONYMOUS, a contributor to all."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        authenticator: Authenticator | None,
        public_paths: Collection[str],
        public_prefixes: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.public_paths = frozenset(public_paths)
        self.public_prefixes = public_prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["path"] in self.public_paths
            or scope["path"].startswith(self.public_prefixes)
        ):
            await self.app(scope, receive, send)
            return
        try:
            principal = await self._principal(scope)
        except AuthenticationError as e:
            refusal = arm_error(401, "AuthenticationFailed", str(e))
            refusal.headers["WWW-Authenticate"] = "Bearer"
            await refusal(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)

    async def _principal(self, scope: Scope) -> Principal:
        if self.authenticator is None:
            return ANONYMOUS
        values = [v for k, v in scope["headers"] if k == b"authorization"]
        if len(values) > 1:
            raise AuthenticationError(
                "Authentication failed. The request has more than one 'Authorization' header."
            )
        header = values[0].decode("latin-1") if values else None
        return await self.authenticator.authenticate(header)
