"""Security tests: each point of docs/security.md, through a real `horarium serve` where it can
be. No test sends a packet off 127.0.0.0/8.

`server` and `api` are those of tests/server_fixtures.py (one server per test module and
database, and the API tests' client for it); `issuer` is an OpenID Connect issuer on 127.0.0.1
publishing an RSA key `rsa-1` and an EC key `ec-1`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.security.oidc_issuer import IssuerKey, OidcIssuer
from tests.server_fixtures import api as api
from tests.server_fixtures import server as server


@pytest.fixture
async def issuer() -> AsyncIterator[OidcIssuer]:
    issuer = OidcIssuer(keys=[IssuerKey.rsa("rsa-1"), IssuerKey.ec("ec-1")])
    await issuer.start()
    yield issuer
    await issuer.stop()
