"""How `serve` is exposed: `--auth none` only on loopback, the Host check, nextLink from
`--public-url`, TLS, and the one-line start-up refusals and warnings. No test binds anything
but 127.0.0.1: refusals are tested through the command line with the server replaced."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from horarium import cli
from horarium.config import Settings
from tests.security.key_tools import API_VERSION, COLLECTION_BODY, JOB_BODY, collection_path
from tests.server_process import running_server


def _serve(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, list[Settings]]:
    """`horarium serve ARGS` with the server replaced (nothing listens): exit code, stderr, and
    the settings the server would have been given."""
    started: list[Settings] = []
    monkeypatch.setattr("horarium.process.serve.serve", started.append)
    result = CliRunner().invoke(cli.main, ["serve", *args])
    return result.exit_code, result.stderr, started


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--auth", "none", "--host", "0.0.0.0"], "--auth none"),
        (["--auth", "none", "--host", "::"], "--auth none"),
        (["--auth", "none", "--host", "192.0.2.10"], "--auth none"),
        (["--oidc-issuer", "https://login.example.com/tenant/v2.0"], "--oidc-audience"),
        (["--ssl-certfile", "cert.pem"], "--ssl-keyfile"),
        (["--ssl-keyfile", "key.pem"], "--ssl-certfile"),
        (["--public-url", "ftp://scheduler.example.com"], "--public-url"),
    ],
)
def test_a_refused_setting_exits_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, args: list[str], named: str
) -> None:
    code, stderr, started = _serve(monkeypatch, *args)
    assert code == 2 and started == []
    assert stderr.count("\n") == 1 and stderr.startswith("Error: ") and named in stderr, stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "localhost"])
def test_auth_none_is_allowed_on_a_loopback_host_and_says_so(
    monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    code, stderr, started = _serve(monkeypatch, "--auth", "none", "--host", host)
    assert code == 0 and [s.auth for s in started] == ["none"]
    assert stderr.count("\n") == 1 and "authentication is OFF" in stderr


def test_a_public_address_without_tls_is_warned_about_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, stderr, started = _serve(monkeypatch, "--host", "0.0.0.0")
    assert code == 0 and len(started) == 1
    assert stderr.count("\n") == 1 and "without TLS" in stderr and "clear" in stderr


def test_auth_none_on_loopback_serves_without_a_token_and_says_authentication_is_off(
    tmp_path: Path,
) -> None:
    with running_server(tmp_path, args=["--auth", "none"]) as server:
        assert server.token is None  # no key is made when keys are not used
        response = httpx.put(
            server.url(collection_path("sub-open")), params=API_VERSION, json=COLLECTION_BODY
        )
        assert response.status_code == 201, response.text
        log = server.log()
    assert "authentication OFF" in log
    assert sum("authentication is OFF" in line for line in log.splitlines()) == 1


# -- Host check ----------------------------------------------------------------------------------


def test_a_request_for_an_unknown_host_is_refused_on_every_path(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        headers = {**server.auth_headers(), "Host": "rebound.example:8080"}
        for path in (collection_path("sub-host"), "/openapi.json", "/docs"):
            response = httpx.get(server.url(path), params=API_VERSION, headers=headers)
            assert response.status_code == 400, response.text
            error = response.json()["error"]
            assert error["code"] == "InvalidHost"
            assert "rebound.example" in error["message"] and "--allowed-hosts" in error["message"]
        for host in ("localhost", f"127.0.0.1:{server.port}", "LOCALHOST.", "[::1]:1"):
            answered = httpx.get(
                server.url("/openapi.json"), headers={"Host": host}, params=API_VERSION
            )
            assert answered.status_code == 200, host


def test_allowed_hosts_and_the_public_url_host_are_answered(tmp_path: Path) -> None:
    args = ["--allowed-hosts", "127.0.0.1,scheduler.internal"]
    with running_server(tmp_path, args=args) as server:
        for host, status in (("scheduler.internal", 200), ("localhost", 400)):
            response = httpx.get(server.url("/openapi.json"), headers={"Host": host})
            assert response.status_code == status, host
    args = ["--public-url", "https://jobs.example.com/scheduler"]
    with running_server(tmp_path / "public", args=args) as server:
        response = httpx.get(server.url("/openapi.json"), headers={"Host": "jobs.example.com"})
        assert response.status_code == 200


def test_next_link_is_built_from_the_public_url(tmp_path: Path) -> None:
    args = ["--public-url", "https://jobs.example.com/scheduler/"]
    with running_server(tmp_path, args=args) as server:
        collection = collection_path(f"sub-{uuid.uuid4().hex[:6]}")
        with httpx.Client(params=API_VERSION, headers=server.auth_headers()) as http:
            assert http.put(server.url(collection), json=COLLECTION_BODY).status_code == 201
            for name in ("a", "b"):
                made = http.put(server.url(f"{collection}/jobs/{name}"), json=JOB_BODY)
                assert made.status_code == 201
            page = http.get(server.url(f"{collection}/jobs"), params={"$top": 1}).json()
    assert page["nextLink"].startswith(f"https://jobs.example.com/scheduler{collection}/jobs?")
    assert "%24skip=1" in page["nextLink"] or "$skip=1" in page["nextLink"]


# -- TLS -----------------------------------------------------------------------------------------


def test_with_a_certificate_the_api_speaks_https_and_says_so(tmp_path: Path) -> None:
    from tests.actions.tls_material import make_pki

    pki = make_pki(tmp_path)
    pem = str(tmp_path / "server.pem")
    args = ["--ssl-certfile", pem, "--ssl-keyfile", pem]
    with running_server(tmp_path, args=args, ca_file=pki.ca_file) as server:
        response = httpx.get(
            server.url(collection_path("sub-tls")),
            params=API_VERSION,
            headers=server.auth_headers(),
            verify=server.verify,
        )
        assert response.status_code == 404  # authenticated over https: nothing there
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{server.port}/openapi.json")
        log = server.log()
    assert f"listening on https://127.0.0.1:{server.port}" in log


def test_a_certificate_that_cannot_be_loaded_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    args = ["--ssl-certfile", str(bogus), "--ssl-keyfile", str(bogus)]
    code, stderr, started = _serve(monkeypatch, *args)
    assert code == 2 and started == [] and stderr.count("\n") == 1
    assert "cannot load" in stderr
