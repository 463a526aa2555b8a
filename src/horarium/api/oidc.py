"""OpenID Connect: JWTs from one issuer, checked against the issuer's published keys."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import jwt
from jwt import exceptions as jwt_errors

from horarium.api.oidc_keys import (
    ALLOWED_ALGORITHMS,
    IssuerError,
    IssuerKeys,
    SigningKey,
    check_transport,
)
from horarium.api.principal import ALL_SUBSCRIPTIONS, AuthenticationError, Principal, Role

NAME_PREFIX = "oidc:"  # a token's caller is named oidc:<sub>, apart from API key names
_SEPARATORS = re.compile(r"[\s,]+")
_PRINTABLE_ALG = re.compile(r"[A-Za-z0-9_+-]{1,16}")


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
        leeway: float = 60.0,
        refresh_cooldown: float = 30.0,
        max_key_age: float = 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`leeway`: seconds of clock skew allowed on exp and nbf; `refresh_cooldown`: least
        seconds between key fetches caused by unknown kids; `max_key_age`: seconds after which
        the cached keys are fetched again; `clock`: seconds since the epoch. Raises ValueError
        for an issuer URL that is not https (plain http only to loopback) or an empty audience."""
        check_transport(issuer)
        if not audience:
            raise ValueError("the OpenID Connect audience must not be empty")
        self.issuer = issuer
        self.audience = audience
        self.subscriptions_claim = subscriptions_claim
        self.role_claim = role_claim
        self.timeout = timeout
        self.leeway = leeway
        self._clock = clock
        self._keys = IssuerKeys(
            issuer, timeout=timeout, cooldown=refresh_cooldown, max_age=max_key_age, clock=clock
        )

    async def verify(self, token: str) -> Principal:
        """The caller a valid token names; AuthenticationError (never quoting the token) else."""
        alg, kid = _signature_header(token)
        key = await self._key(kid, alg)
        claims = self._verified_claims(token, key, alg)
        self._check_validity_period(claims)
        return Principal(
            name=NAME_PREFIX + claims["sub"],
            subscriptions=subscriptions_of(claims, self.subscriptions_claim),
            role=role_of(claims, self.role_claim),
        )

    async def close(self) -> None:
        """Release the HTTP client used for discovery and key fetches."""
        await self._keys.close()

    async def _key(self, kid: str | None, alg: str) -> SigningKey:
        try:
            key = await self._keys.find(kid)
        except IssuerError:
            raise AuthenticationError(
                "OpenID Connect issuer unreachable: its signing keys could not be fetched"
            ) from None
        if key is None:
            raise AuthenticationError(
                "unknown key: the issuer publishes no key with the token's kid"
                if kid is not None
                else "unknown key: the token names no kid and the issuer publishes several keys"
            )
        if not key.fits(alg):
            raise AuthenticationError(f"the key the token names does not fit its algorithm {alg}")
        return key

    def _verified_claims(self, token: str, key: SigningKey, alg: str) -> dict[str, Any]:
        """The payload, once signature, issuer and audience are checked (times are not)."""
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.audience,
                issuer=self.issuer,
                options={
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                    "require": ["exp", "iss", "aud", "sub"],
                },
            )
        except jwt_errors.PyJWTError as exc:
            raise AuthenticationError(self._reason(exc)) from None
        if not isinstance(claims["sub"], str) or not claims["sub"]:
            raise AuthenticationError("malformed token: 'sub' must be a non-empty string")
        return claims

    def _reason(self, error: jwt_errors.PyJWTError) -> str:
        """What is wrong, in words of our own (the library's text may quote the token)."""
        match error:
            case jwt_errors.InvalidSignatureError():
                return "bad signature"
            case jwt_errors.MissingRequiredClaimError():
                return f"malformed token: the '{error.claim}' claim is missing"
            case jwt_errors.InvalidAudienceError():
                return f"wrong audience: the token is not meant for '{self.audience}'"
            case jwt_errors.InvalidIssuerError():
                return f"wrong issuer: the token was not issued by '{self.issuer}'"
            case jwt_errors.InvalidAlgorithmError():
                return "token algorithm not allowed"
            case _:
                return "malformed token"

    def _check_validity_period(self, claims: dict[str, Any]) -> None:
        now = self._clock()
        expires = _timestamp(claims, "exp")
        if expires is not None and now >= expires + self.leeway:
            raise AuthenticationError("token expired")
        not_before = _timestamp(claims, "nbf")
        if not_before is not None and now + self.leeway < not_before:
            raise AuthenticationError("token not yet valid (its nbf is in the future)")


def _signature_header(token: str) -> tuple[str, str | None]:
    """The token's `alg` (one of ALLOWED_ALGORITHMS) and `kid`."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt_errors.PyJWTError:
        raise AuthenticationError("malformed token: not a signed JWT") from None
    alg, kid = header.get("alg"), header.get("kid")
    if alg not in ALLOWED_ALGORITHMS:
        shown = f" {alg}" if isinstance(alg, str) and _PRINTABLE_ALG.fullmatch(alg) else ""
        raise AuthenticationError(
            f"token algorithm{shown} not allowed (accepted: {', '.join(ALLOWED_ALGORITHMS)})"
        )
    if kid is not None and not isinstance(kid, str):
        raise AuthenticationError("malformed token: 'kid' must be a string")
    return alg, kid


def _timestamp(claims: dict[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AuthenticationError(f"malformed token: '{name}' must be a number of seconds")
    return float(value)


def subscriptions_of(claims: dict[str, Any], claim: str) -> frozenset[str]:
    """The lower-cased subscriptions the claim lists ({'*'} for all); refuses none."""
    words = _words(claims, claim)
    if words is None:
        raise AuthenticationError(f"the token has no subscriptions: its '{claim}' claim is missing")
    if not words:
        raise AuthenticationError(f"the token has no subscriptions: its '{claim}' claim is empty")
    subscriptions = frozenset(word.lower() for word in words)
    return frozenset({ALL_SUBSCRIPTIONS}) if ALL_SUBSCRIPTIONS in subscriptions else subscriptions


def role_of(claims: dict[str, Any], claim: str) -> Role:
    """Contributor when the claim names contributor (any case); reader otherwise, including
    when the claim is missing (least privilege)."""
    words = _words(claims, claim) or []
    contributor = any(word.lower() == Role.CONTRIBUTOR for word in words)
    return Role.CONTRIBUTOR if contributor else Role.READER


def _words(claims: dict[str, Any], claim: str) -> list[str] | None:
    """A claim's entries: a JSON list of strings, or a space- or comma-separated string; None
    when the token lacks the claim."""
    value = _claim(claims, claim)
    if value is None:
        return None
    if isinstance(value, str):
        return [word for word in _SEPARATORS.split(value) if word]
    if isinstance(value, list) and all(isinstance(entry, str) for entry in value):
        return [word for entry in value if (word := entry.strip())]
    raise AuthenticationError(
        f"malformed token: the '{claim}' claim must be a list of strings or a string"
    )


def _claim(claims: dict[str, Any], name: str) -> Any:
    """The claim called `name`; else, for a dotted name, the nested one (realm_access.roles)."""
    if name in claims:
        return claims[name]
    value: Any = claims
    for part in name.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value
