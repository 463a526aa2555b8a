"""The web dashboard's security, through a real `horarium serve`: its files need no token and
carry a strict Content-Security-Policy, its data comes only through the API (whose keys scope
it), and the engine page, which spans tenants, needs a key for every subscription."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.security.key_tools import client, new_key
from tests.server_process import ServerProcess, running_server

ENGINE = "/providers/Microsoft.Scheduler/engine"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with running_server(tmp_path_factory.mktemp("dashboard-access")) as process:
        yield process


def _failures(subscription: str) -> str:
    return f"/subscriptions/{subscription}/providers/Microsoft.Scheduler/failures"


def _subscription() -> str:
    return f"sub-{uuid.uuid4().hex[:8]}"


def test_the_engine_status_needs_a_key_for_every_subscription(server: ServerProcess) -> None:
    mine = _subscription()
    with client(server, new_key(server, mine)) as http:
        refused = http.get(ENGINE)
    assert refused.status_code == 403
    message = refused.json()["error"]["message"]
    assert "Microsoft.Scheduler/engine/read" in message and "scope '/'" in message
    with client(server, new_key(server, "*", "--role", "reader")) as http:
        assert http.get(ENGINE).status_code == 200


def test_failures_of_another_subscription_are_refused(server: ServerProcess) -> None:
    mine, theirs = _subscription(), _subscription()
    with client(server, new_key(server, mine, "--role", "reader")) as http:
        assert http.get(_failures(mine)).status_code == 200
        refused = http.get(_failures(theirs))
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "AuthorizationFailed"


def test_dashboard_files_need_no_token_and_forbid_inline_and_foreign_scripts(
    server: ServerProcess,
) -> None:
    with client(server, None) as http:
        page = http.get("/ui/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "script-src 'self';" in policy and "unsafe" not in policy
        assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
        assert page.headers["x-content-type-options"] == "nosniff"
        assert "<script>" not in page.text  # no inline script; the module is a file
        for asset in re.findall(r'(?:src|href)="([^"#]+)"', page.text):
            assert asset.startswith("/"), asset  # nothing from another origin
            assert http.get(asset).status_code == 200, asset
        assert http.get("/ui", follow_redirects=False).headers["location"] == "/ui/"
        root = http.get("/", follow_redirects=False)  # a browser pointed at the service
        assert root.status_code == 307 and root.headers["location"] == "/ui/"
        # Paths the package does not ship are not public, and the data needs a token.
        assert http.get("/ui/js/not-shipped.js").status_code == 401
        assert http.get(_failures(_subscription())).status_code == 401
        assert http.get(ENGINE).status_code == 401


def test_every_module_the_dashboard_imports_is_served(server: ServerProcess) -> None:
    static = Path(__file__).parents[2] / "src" / "horarium" / "ui" / "static" / "js"
    with client(server, None) as http:
        for module in static.glob("*.js"):
            served = http.get(f"/ui/js/{module.name}")
            assert served.status_code == 200, module.name
            assert served.headers["content-type"].startswith("text/javascript")
            for imported in re.findall(r'from "([^"]+)"', served.text):
                assert imported.startswith("./"), (module.name, imported)


def test_the_api_explorer_is_served_from_the_package(server: ServerProcess) -> None:
    with client(server, None) as http:
        page = http.get("/docs")
        assert page.status_code == 200
        assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert set(assets) == {
            "/docs/swagger-ui.css",
            "/docs/docs.css",
            "/docs/swagger-ui-bundle.js",
            "/docs/init.js",
            "/ui/",  # the link back to the dashboard
        }
        assert "<script>" not in page.text
        assert "script-src 'self';" in page.headers["content-security-policy"]
        for asset in assets:
            served = http.get(asset)
            assert served.status_code == 200 and len(served.content) > 0, asset
        etag = http.get("/docs/swagger-ui-bundle.js").headers["etag"]
        again = http.get("/docs/swagger-ui-bundle.js", headers={"If-None-Match": etag})
        assert again.status_code == 304
    assert httpx.get(server.url("/openapi.json")).status_code == 200
