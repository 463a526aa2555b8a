"""Outbound authentication that needs more than a header: client certificates and Azure AD."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from horarium.actions.base import ExecutionContext
from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.actions.action_context import ServeApp, make_context
from tests.actions.tls_material import Pki, make_pki


@pytest.fixture
def pki(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pki:
    material = make_pki(tmp_path)
    # The service trusts the test CA the way an operator would: SSL_CERT_FILE.
    monkeypatch.setenv("SSL_CERT_FILE", str(material.ca_file))
    return material


def who_is_calling_app() -> web.Application:
    async def whoami(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(x[0] for x in peer["subject"])["commonName"] if peer else "nobody"
        return web.Response(text=f"hello {subject}")

    app = web.Application()
    app.router.add_get("/", whoami)
    return app


def cert_action(uri: str, pfx: str | None, password: str | None) -> dict[str, Any]:
    request: dict[str, Any] = {"uri": uri, "method": "GET"}
    if pfx is not None:
        request["authentication"] = {"type": "ClientCertificate", "pfx": pfx, "password": password}
    return {"type": "Https", "request": request}


async def test_client_certificate_is_presented_in_the_handshake(
    pki: Pki, serve: ServeApp, context: ExecutionContext
) -> None:
    base = await serve(who_is_calling_app(), pki.server_context)
    async with Actions(Settings()) as actions:
        first = await actions.run(
            cert_action(base + "/", pki.client_pfx, pki.client_password), context
        )
        again = await actions.run(
            cert_action(base + "/", pki.client_pfx, pki.client_password), make_context()
        )
    assert first.succeeded, first.message
    assert first.message.endswith(f" Body: hello {pki.client_subject}")
    assert again.succeeded
    for result in (first, again):
        assert pki.client_password not in result.message
        assert pki.client_pfx[:40] not in result.message


async def test_without_a_client_certificate_the_tls_handshake_fails(
    pki: Pki, serve: ServeApp, context: ExecutionContext
) -> None:
    base = await serve(who_is_calling_app(), pki.server_context)
    async with Actions(Settings()) as actions:
        bare = await actions.run(cert_action(base + "/", None, None), context)
        stranger = await actions.run(cert_action(base + "/", pki.stranger_pfx, "x"), context)
    for result in (bare, stranger):
        assert not result.succeeded
        assert result.message.startswith("Http Action - Request to host '127.0.0.1' failed: ")
        assert "client certificate" in result.message


async def test_untrusted_server_certificate_fails(
    tmp_path: Path, serve: ServeApp, context: ExecutionContext
) -> None:
    material = make_pki(tmp_path)  # SSL_CERT_FILE not set: the test CA is not trusted
    base = await serve(who_is_calling_app(), material.server_context)
    async with Actions(Settings()) as actions:
        result = await actions.run(
            cert_action(base + "/", material.client_pfx, material.client_password), context
        )
    assert not result.succeeded
    assert "TLS error: the server certificate was not accepted" in result.message


async def test_wrong_pfx_password_fails_naming_the_fields(
    pki: Pki, context: ExecutionContext
) -> None:
    async with Actions(Settings()) as actions:
        result = await actions.run(
            cert_action("https://127.0.0.1:1/", pki.client_pfx, "not-the-password"), context
        )
    assert not result.succeeded
    assert result.message == (
        "Http Action - invalid action: 'authentication.pfx' could not be opened with "
        "'authentication.password' (wrong password or not a PKCS#12 file)"
    )
    assert "not-the-password" not in result.message


class FakeAzureAd:
    """Stand-in for Azure AD's v1 token endpoint: /{tenant}/oauth2/token, client credentials."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []

    async def token(self, request: web.Request) -> web.Response:
        form = dict(await request.post())
        tenant = request.match_info["tenant"]
        self.requests.append((tenant, {k: str(v) for k, v in form.items()}))
        if form.get("client_secret") != "the-client-secret":
            return web.json_response(
                {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid secret"},
                status=401,
            )
        return web.json_response(
            {
                "token_type": "Bearer",
                "expires_in": "3599",
                "resource": form["resource"],
                "access_token": f"token-{len(self.requests)}",
            }
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/{tenant}/oauth2/token", self.token)
        return app


def oauth_action(uri: str, secret: str = "the-client-secret") -> dict[str, Any]:
    auth = {
        "type": "ActiveDirectoryOAuth",
        "tenant": "contoso.onmicrosoft.com",
        "audience": "https://management.core.windows.net/",
        "clientId": "client-app-id",
        "secret": secret,
    }
    return {"type": "Http", "request": {"uri": uri, "method": "POST", "authentication": auth}}


async def test_oauth_bearer_token_reaches_the_target_and_is_cached(serve: ServeApp) -> None:
    aad = FakeAzureAd()
    authority = await serve(aad.app())
    seen: list[str] = []

    async def target(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/api", target)
    base = await serve(app)
    async with Actions(Settings(aad_authority=authority)) as actions:
        first = await actions.run(oauth_action(base + "/api"), make_context())
        second = await actions.run(oauth_action(base + "/api"), make_context())
    assert first.succeeded and second.succeeded
    assert seen == ["Bearer token-1", "Bearer token-1"]
    assert len(aad.requests) == 1
    tenant, form = aad.requests[0]
    assert tenant == "contoso.onmicrosoft.com"
    assert form == {
        "grant_type": "client_credentials",
        "client_id": "client-app-id",
        "client_secret": "the-client-secret",
        "resource": "https://management.core.windows.net/",
    }
    assert "the-client-secret" not in first.message


async def test_oauth_refusal_fails_without_calling_the_target(serve: ServeApp) -> None:
    aad = FakeAzureAd()
    authority = await serve(aad.app())
    called: list[bool] = []

    async def target(request: web.Request) -> web.Response:
        called.append(True)
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/api", target)
    base = await serve(app)
    async with Actions(Settings(aad_authority=authority)) as actions:
        result = await actions.run(oauth_action(base + "/api", "wrong-secret"), make_context())
    assert not result.succeeded
    assert not called
    assert result.message.startswith(
        "Http Action - Request to host '127.0.0.1' failed: OAuth token"
    )
    assert "invalid_client" in result.message
    assert "wrong-secret" not in result.message


async def test_a_token_endpoint_redirect_is_not_followed_with_the_secret(serve: ServeApp) -> None:
    """The token request carries the client secret in its body: a 307 (which keeps the body)
    to another host must not take it there; the attempt fails saying what the endpoint did."""
    received: list[str] = []

    async def elsewhere(request: web.Request) -> web.Response:
        received.append(await request.text())
        return web.json_response({"access_token": "stolen", "expires_in": 3600})

    other = web.Application()
    other.router.add_post("/{tenant}/oauth2/token", elsewhere)
    thief = await serve(other)

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(thief + request.path)

    authority_app = web.Application()
    authority_app.router.add_post("/{tenant}/oauth2/token", redirect)
    authority = await serve(authority_app)
    async with Actions(Settings(aad_authority=authority)) as actions:
        result = await actions.run(oauth_action(authority + "/api"), make_context())
    assert not result.succeeded
    assert "OAuth token" in result.message and "307" in result.message
    assert received == []
