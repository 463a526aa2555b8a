"""OpenID Connect end to end: `horarium serve --oidc-issuer … --oidc-audience …` accepts the
issuer's tokens, scoped to their subscriptions and role, next to its API keys; tokens from
elsewhere are 401."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import forkserver
from tests.security.oidc_issuer import IssuerKey, OidcIssuer
from tests.server_process import ServerProcess, running_server

AUDIENCE = "api://horarium"
VERSION = {"api-version": "2016-03-01"}
COLLECTION = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}


@pytest.fixture
def server(issuer: OidcIssuer, tmp_path: Path) -> Iterator[ServerProcess]:
    args = ["--oidc-issuer", issuer.url, "--oidc-audience", AUDIENCE]
    with running_server(tmp_path, args=args) as process:
        yield process


def _token(issuer: OidcIssuer, kid: str = "rsa-1", **claims: Any) -> str:
    key = next(key for key in issuer.keys if key.kid == kid)
    return issuer.mint(key, issuer.claims(time.time(), AUDIENCE, **claims))


def _collection(subscription: str, name: str = "jc1") -> str:
    return (
        f"/subscriptions/{subscription}/resourceGroups/rg"
        f"/providers/Microsoft.Scheduler/jobCollections/{name}"
    )


async def _put(server: ServerProcess, token: str, subscription: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:
        return await http.put(
            _collection(subscription),
            params=VERSION,
            json=COLLECTION,
            headers={"Authorization": f"Bearer {token}"},
        )


async def test_a_contributor_token_writes_in_its_subscriptions_only(
    issuer: OidcIssuer, server: ServerProcess
) -> None:
    token = _token(issuer, subscriptions=["Sub-A"], role="contributor")
    assert (await _put(server, token, "sub-a")).status_code == 201
    refused = await _put(server, token, "sub-b")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "AuthorizationFailed"
    assert "oidc:user-1" in refused.json()["error"]["message"]


async def test_an_es256_reader_token_reads_but_cannot_write(
    issuer: OidcIssuer, server: ServerProcess
) -> None:
    assert (await _put(server, _token(issuer, subscriptions="sub-r"), "sub-r")).status_code == 201
    reader = _token(issuer, kid="ec-1", subscriptions=["sub-r"], role="reader")
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as http:
        read = await http.get(
            _collection("sub-r"), params=VERSION, headers={"Authorization": f"Bearer {reader}"}
        )
    assert read.status_code == 200, read.text
    assert (await _put(server, reader, "sub-r")).status_code == 403


async def test_tokens_of_another_issuer_or_audience_are_401_and_keys_still_work(
    issuer: OidcIssuer, server: ServerProcess
) -> None:
    stranger = OidcIssuer(keys=[IssuerKey.rsa("rsa-1")])  # same kid, not the issuer's key
    foreign = stranger.mint(stranger.keys[0], issuer.claims(time.time(), AUDIENCE))
    for token in (foreign, _token(issuer, aud="api://other")):
        response = await _put(server, token, "sub-a")
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["error"]["code"] == "AuthenticationFailed"
    assert server.token is not None
    assert (await _put(server, server.token, "sub-k")).status_code == 201


def test_an_issuer_that_is_not_https_is_refused_in_one_line(tmp_path: Path) -> None:
    result = forkserver.run(
        [sys.executable, "-m", "horarium.cli", "serve", "--data-dir", str(tmp_path),
         "--oidc-issuer", "http://login.example.com/tenant", "--oidc-audience", AUDIENCE],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--oidc-issuer" in lines[0] and "https" in lines[0], lines
