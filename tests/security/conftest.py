"""Security tests: each point of docs/security.md, through a real `horarium serve` where it can
be. No test sends a packet off 127.0.0.0/8.

`server` is one server per test module and database (a module may define its own, e.g. with
other options); `api` is the API tests' client (tests/api/api_client.py) for it; `issuer` is an
OpenID Connect issuer on 127.0.0.1 publishing an RSA key `rsa-1` and an EC key `ec-1`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.api.api_client import Api
from tests.security.oidc_issuer import IssuerKey, OidcIssuer
from tests.server_process import DATABASES, ServerProcess, serving


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    with serving(request.param, tmp_path_factory.mktemp(f"server-{request.param}")) as process:
        yield process


@pytest.fixture
def api(server: ServerProcess) -> Iterator[Api]:
    client = Api(server)
    yield client
    client.http.close()


@pytest.fixture
async def issuer() -> AsyncIterator[OidcIssuer]:
    issuer = OidcIssuer(keys=[IssuerKey.rsa("rsa-1"), IssuerKey.ec("ec-1")])
    await issuer.start()
    yield issuer
    await issuer.stop()
