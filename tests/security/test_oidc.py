"""OpenID Connect: tokens of a real issuer on 127.0.0.1 (discovery + JWKS), checked by
OidcVerifier; times come from a clock the test sets."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from horarium.api.oidc import OidcVerifier
from horarium.api.principal import AuthenticationError, Principal, Role
from tests.security.oidc_issuer import IssuerKey, OidcIssuer, hs256_token, unsigned_token

AUDIENCE = "api://horarium"
LEEWAY = 60.0
COOLDOWN = 30.0
MAX_KEY_AGE = 3600.0


class Clock:
    """Seconds since the epoch, moved only by the test."""

    def __init__(self) -> None:
        self.now = 2_000_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_verifier(issuer: OidcIssuer, clock: Clock, **options: Any) -> OidcVerifier:
    return OidcVerifier(
        issuer.url,
        AUDIENCE,
        leeway=LEEWAY,
        refresh_cooldown=COOLDOWN,
        max_key_age=MAX_KEY_AGE,
        clock=clock,
        timeout=5.0,
        **options,
    )


@pytest.fixture
async def verifier(issuer: OidcIssuer, clock: Clock) -> AsyncIterator[OidcVerifier]:
    verifier = make_verifier(issuer, clock)
    yield verifier
    await verifier.close()


def token(issuer: OidcIssuer, clock: Clock, kid: str = "rsa-1", **claims: Any) -> str:
    key = next(key for key in issuer.keys if key.kid == kid)
    return issuer.mint(key, issuer.claims(clock.now, AUDIENCE, **claims))


async def refused(verifier: OidcVerifier, token: str) -> str:
    """The message a refused token gets; it quotes no part of the token."""
    with pytest.raises(AuthenticationError) as refusal:
        await verifier.verify(token)
    message = str(refusal.value)
    assert not token or token not in message
    for part in token.split("."):
        assert len(part) < 8 or part not in message
    return message


# -- valid tokens ------------------------------------------------------------------------------


async def test_an_rs256_token_names_its_subject_subscriptions_and_role(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    principal = await verifier.verify(
        token(issuer, clock, sub="alice", subscriptions=["Sub-A", "sub-b"], role="contributor")
    )
    assert principal == Principal(
        name="oidc:alice", subscriptions=frozenset({"sub-a", "sub-b"}), role=Role.CONTRIBUTOR
    )
    assert principal.reaches("SUB-B") and not principal.reaches("sub-c")


async def test_an_es256_token_with_subscriptions_as_a_string_is_accepted(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    principal = await verifier.verify(
        token(issuer, clock, kid="ec-1", sub="bob", subscriptions="Sub-A, sub-b  SUB-C", role=None)
    )
    assert principal == Principal(
        name="oidc:bob", subscriptions=frozenset({"sub-a", "sub-b", "sub-c"}), role=Role.READER
    )


async def test_a_star_subscription_reaches_every_subscription(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    principal = await verifier.verify(token(issuer, clock, subscriptions=["*"]))
    assert principal.subscriptions == frozenset({"*"})
    assert principal.reaches("any-subscription")


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("contributor", Role.CONTRIBUTOR),
        ("Contributor", Role.CONTRIBUTOR),
        (["reader", "contributor"], Role.CONTRIBUTOR),
        ("reader contributor", Role.CONTRIBUTOR),
        ("reader", Role.READER),
        (["admin", "owner"], Role.READER),
        ([], Role.READER),
        (None, Role.READER),  # no role claim: least privilege
    ],
)
async def test_the_role_is_contributor_only_when_the_role_claim_names_it(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier, role: Any, expected: Role
) -> None:
    principal = await verifier.verify(token(issuer, clock, role=role))
    assert principal.role is expected
    assert principal.may_write is (expected is Role.CONTRIBUTOR)


async def test_the_claims_read_are_configurable_and_may_be_nested(
    issuer: OidcIssuer, clock: Clock
) -> None:
    verifier = make_verifier(
        issuer, clock, subscriptions_claim="tenants", role_claim="realm_access.roles"
    )
    try:
        principal = await verifier.verify(
            token(
                issuer,
                clock,
                subscriptions=None,
                role=None,
                tenants=["Sub-X"],
                realm_access={"roles": ["offline_access", "contributor"]},
            )
        )
    finally:
        await verifier.close()
    assert principal.subscriptions == frozenset({"sub-x"})
    assert principal.role is Role.CONTRIBUTOR


@pytest.mark.parametrize(
    ("subscriptions", "reason"),
    [(None, "missing"), ([], "empty"), ("", "empty"), (" , ", "empty")],
)
async def test_a_token_without_subscriptions_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier, subscriptions: Any, reason: str
) -> None:
    message = await refused(verifier, token(issuer, clock, subscriptions=subscriptions))
    assert message == f"the token has no subscriptions: its 'subscriptions' claim is {reason}"


async def test_a_subscriptions_claim_of_the_wrong_type_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    message = await refused(verifier, token(issuer, clock, subscriptions={"a": 1}))
    assert "'subscriptions' claim must be a list of strings or a string" in message


# -- validity period, audience, issuer ---------------------------------------------------------


async def test_an_expired_token_is_refused_after_the_leeway(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    issued = token(issuer, clock, exp=int(clock.now) + 600)
    clock.now += 600 + LEEWAY - 1
    assert (await verifier.verify(issued)).name == "oidc:user-1"
    clock.now += 1
    assert await refused(verifier, issued) == "token expired"


async def test_a_token_whose_nbf_is_in_the_future_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    early = token(issuer, clock, nbf=int(clock.now + LEEWAY) + 1)
    assert "not yet valid" in await refused(verifier, early)
    within_leeway = token(issuer, clock, nbf=int(clock.now + LEEWAY))
    assert (await verifier.verify(within_leeway)).name == "oidc:user-1"


async def test_a_token_without_exp_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    message = await refused(verifier, token(issuer, clock, exp=None))
    assert message == "malformed token: the 'exp' claim is missing"


async def test_a_token_for_another_audience_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    message = await refused(verifier, token(issuer, clock, aud="api://someone-else"))
    assert message.startswith("wrong audience")
    accepted = token(issuer, clock, aud=["api://someone-else", AUDIENCE])
    assert (await verifier.verify(accepted)).name == "oidc:user-1"


async def test_a_token_of_another_issuer_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    for other in ("https://evil.example/", issuer.url.rsplit("/", 1)[0], issuer.url + "/"):
        message = await refused(verifier, token(issuer, clock, iss=other))
        assert message.startswith("wrong issuer")


async def test_a_discovery_document_naming_another_issuer_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier, caplog: pytest.LogCaptureFixture
) -> None:
    issuer.discovery_issuer = "https://evil.example/"
    with caplog.at_level(logging.WARNING):
        message = await refused(verifier, token(issuer, clock))
    assert "issuer unreachable" in message
    assert "names issuer 'https://evil.example/'" in caplog.text
    assert issuer.jwks_requests == 0


# -- signatures and algorithms -----------------------------------------------------------------


async def test_an_unsigned_alg_none_token_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    forged = unsigned_token({"alg": "none", "kid": "rsa-1"}, issuer.claims(clock.now, AUDIENCE))
    message = await refused(verifier, forged)
    assert message.startswith("token algorithm none not allowed")


async def test_an_hs256_token_keyed_with_the_issuers_public_key_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    rsa_key = issuer.keys[0]
    claims = issuer.claims(clock.now, AUDIENCE)
    for secret in (rsa_key.public_pem(), str(rsa_key.jwk()).encode()):
        forged = hs256_token(secret, claims, kid=rsa_key.kid)
        assert (await refused(verifier, forged)).startswith("token algorithm HS256 not allowed")
    assert issuer.jwks_requests == 0  # refused before any key is looked at


async def test_a_tampered_token_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    genuine = token(issuer, clock, role="reader")
    head, _, signature = genuine.split(".")
    escalated = issuer.claims(clock.now, AUDIENCE, role="contributor", subscriptions=["*"])
    forged_body = unsigned_token({}, escalated).split(".")[1]
    assert await refused(verifier, f"{head}.{forged_body}.{signature}") == "bad signature"
    flipped = signature[:-4] + ("AAAA" if signature[-4:] != "AAAA" else "BBBB")
    assert await refused(verifier, f"{head}.{genuine.split('.')[1]}.{flipped}") == "bad signature"


async def test_a_token_signed_by_a_key_the_issuer_does_not_publish_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    impostor = IssuerKey.rsa("rsa-1")  # same kid, other key
    forged = issuer.mint(impostor, issuer.claims(clock.now, AUDIENCE))
    assert await refused(verifier, forged) == "bad signature"


async def test_a_token_whose_alg_does_not_fit_the_named_key_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    ec_key = issuer.keys[1]
    rs_claimed = unsigned_token(
        {"alg": "RS256", "kid": ec_key.kid}, issuer.claims(clock.now, AUDIENCE), b"x" * 256
    )
    message = await refused(verifier, rs_claimed)
    assert message == "the key the token names does not fit its algorithm RS256"


@pytest.mark.parametrize(
    "garbage",
    ["not-a-jwt", "a.b.c", "eyJhbGciOiJSUzI1NiJ9.e30", "", "eyJ.eyJ.eyJ"],
)
async def test_a_malformed_token_is_refused(verifier: OidcVerifier, garbage: str) -> None:
    assert (await refused(verifier, garbage)).startswith("malformed token")


# -- keys: rotation, unknown kids, issuer down -------------------------------------------------


async def test_a_rotated_key_is_picked_up_at_once(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    await verifier.verify(token(issuer, clock))
    assert issuer.jwks_requests == 1
    issuer.keys.append(IssuerKey.rsa("rsa-2"))
    principal = await verifier.verify(token(issuer, clock, kid="rsa-2", sub="after-rotation"))
    assert principal.name == "oidc:after-rotation"
    assert issuer.jwks_requests == 2
    await verifier.verify(token(issuer, clock, kid="rsa-2"))
    assert issuer.jwks_requests == 2  # cached


async def test_a_burst_of_tokens_with_a_new_key_fetches_the_keys_once(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    await verifier.verify(token(issuer, clock))
    issuer.keys.append(IssuerKey.ec("ec-2"))
    burst = [token(issuer, clock, kid="ec-2", sub=f"user-{n}") for n in range(20)]
    principals = await asyncio.gather(*(verifier.verify(t) for t in burst))
    assert {p.name for p in principals} == {f"oidc:user-{n}" for n in range(20)}
    assert issuer.jwks_requests == 2


async def test_a_flood_of_unknown_kids_fetches_the_keys_once_per_cooldown(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    await verifier.verify(token(issuer, clock))
    assert issuer.jwks_requests == 1
    bogus = [
        issuer.mint(issuer.keys[0], issuer.claims(clock.now, AUDIENCE), kid=f"bogus-{n}")
        for n in range(50)
    ]
    concurrent = await asyncio.gather(*(verifier.verify(t) for t in bogus), return_exceptions=True)
    assert all(isinstance(outcome, AuthenticationError) for outcome in concurrent)
    for forged in bogus:
        assert (await refused(verifier, forged)).startswith("unknown key")
    assert issuer.jwks_requests == 2
    clock.now += COOLDOWN
    await refused(verifier, bogus[0])
    assert issuer.jwks_requests == 3
    assert (await verifier.verify(token(issuer, clock))).name == "oidc:user-1"


async def test_a_kid_still_unknown_after_the_refresh_is_refused(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    await verifier.verify(token(issuer, clock))
    unpublished = IssuerKey.rsa("rsa-unpublished")
    forged = issuer.mint(unpublished, issuer.claims(clock.now, AUDIENCE))
    message = await refused(verifier, forged)
    assert message == "unknown key: the issuer publishes no key with the token's kid"
    assert issuer.jwks_requests == 2


async def test_the_first_token_fetches_the_keys_only_once_even_if_its_kid_is_unknown(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    forged = issuer.mint(IssuerKey.ec("ec-unpublished"), issuer.claims(clock.now, AUDIENCE))
    assert (await refused(verifier, forged)).startswith("unknown key")
    assert (issuer.discovery_requests, issuer.jwks_requests) == (1, 1)


async def test_a_token_without_kid_is_checked_with_the_only_key(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    only = issuer.keys[0]
    issuer.keys[:] = [only]
    without_kid = issuer.mint(only, issuer.claims(clock.now, AUDIENCE), kid=None)
    assert (await verifier.verify(without_kid)).name == "oidc:user-1"
    issuer.keys.append(IssuerKey.ec("ec-2"))
    clock.now += MAX_KEY_AGE
    without_kid = issuer.mint(only, issuer.claims(clock.now, AUDIENCE), kid=None)
    message = await refused(verifier, without_kid)
    assert message == "unknown key: the token names no kid and the issuer publishes several keys"


async def test_keys_older_than_the_maximum_age_are_fetched_again(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    old = token(issuer, clock, exp=int(clock.now + 2 * MAX_KEY_AGE))
    await verifier.verify(old)
    issuer.keys[:] = [IssuerKey.rsa("rsa-2")]  # rsa-1 withdrawn
    clock.now += MAX_KEY_AGE - 1
    await verifier.verify(old)
    assert issuer.jwks_requests == 1
    clock.now += 1
    assert (await refused(verifier, old)).startswith("unknown key")
    assert issuer.jwks_requests == 2  # the refresh for age, not a second one for the kid


async def test_an_unreachable_issuer_refuses_tokens_and_recovery_is_immediate(
    clock: Clock,
) -> None:
    issuer = OidcIssuer(keys=[IssuerKey.rsa("rsa-1")])  # not started: nothing listens
    verifier = make_verifier(issuer, clock)
    try:
        valid = token(issuer, clock)
        for _ in range(2):
            assert (await refused(verifier, valid)).startswith("OpenID Connect issuer unreachable")
        await issuer.start()
        try:
            assert (await verifier.verify(valid)).name == "oidc:user-1"
        finally:
            await issuer.stop()
    finally:
        await verifier.close()


async def test_cached_keys_still_verify_while_the_issuer_is_down(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier
) -> None:
    await verifier.verify(token(issuer, clock))
    await issuer.stop()
    assert (await verifier.verify(token(issuer, clock, kid="ec-1"))).name == "oidc:user-1"
    issuer.keys.append(IssuerKey.rsa("rsa-2"))
    rotated = token(issuer, clock, kid="rsa-2")
    assert (await refused(verifier, rotated)).startswith("OpenID Connect issuer unreachable")
    clock.now += MAX_KEY_AGE  # stale keys, issuer still down: kept, not dropped
    assert (await verifier.verify(token(issuer, clock))).name == "oidc:user-1"
    await issuer.start()
    clock.now += COOLDOWN
    assert (await verifier.verify(token(issuer, clock, kid="rsa-2"))).name == "oidc:user-1"


async def test_an_issuer_answering_an_error_refuses_tokens(
    issuer: OidcIssuer, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    verifier = OidcVerifier(issuer.url + "/missing", AUDIENCE, clock=clock)
    try:
        with caplog.at_level(logging.WARNING):
            message = await refused(verifier, token(issuer, clock))
    finally:
        await verifier.close()
    assert message.startswith("OpenID Connect issuer unreachable")
    assert "answered HTTP 404" in caplog.text


# -- configuration -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["http://login.example.com/tenant", "ftp://127.0.0.1/", "login.example.com", "https://"],
)
def test_an_issuer_not_reached_over_https_is_refused_at_startup(url: str) -> None:
    with pytest.raises(ValueError, match="must be an https URL"):
        OidcVerifier(url, AUDIENCE)


def test_an_empty_audience_is_refused_at_startup() -> None:
    with pytest.raises(ValueError, match="audience"):
        OidcVerifier("https://login.example.com/tenant", "")


async def test_no_error_message_or_log_line_quotes_the_token(
    issuer: OidcIssuer, clock: Clock, verifier: OidcVerifier, caplog: pytest.LogCaptureFixture
) -> None:
    claims = issuer.claims(clock.now, AUDIENCE)
    refused_tokens = [
        token(issuer, clock, exp=int(clock.now) - 3600),
        token(issuer, clock, aud="other"),
        token(issuer, clock, iss="https://other.example/"),
        token(issuer, clock, subscriptions=[]),
        token(issuer, clock, sub=""),
        unsigned_token({"alg": "none"}, claims),
        unsigned_token({"alg": "x" * 200}, claims),
        unsigned_token({"alg": "RS256", "kid": "rsa-1"}, claims, b"bad"),
        issuer.mint(issuer.keys[0], claims, kid="unknown-kid"),
    ]
    with caplog.at_level(logging.DEBUG):
        messages = [await refused(verifier, forged) for forged in refused_tokens]
    assert len(set(messages)) == len(messages)  # each says what is wrong
    for forged in refused_tokens:
        assert forged not in caplog.text
