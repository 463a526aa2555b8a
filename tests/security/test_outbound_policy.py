"""The outbound policy at work (docs/security.md, "Outbound policy"): actions refused before they
connect, on every redirect hop, and credentials kept to the job's own origin.

Every server here listens on 127.0.0.0/8. A denied target is a loopback address the test's own
settings deny (127.0.0.3/32), served by a `Tripwire` that counts the connections it receives.
The metadata and link-local defaults are checked with connecting made impossible."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from horarium.actions.base import ExecutionContext
from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.support import wait_until

DENIED_HOST = "127.0.0.3"
DENY = (f"{DENIED_HOST}/32",)
REFUSED = (
    f"address {DENIED_HOST} is denied by the outbound policy (--outbound-deny {DENIED_HOST}/32)"
)


def context() -> ExecutionContext:
    return ExecutionContext(
        job_id="/subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler"
        "/jobCollections/c/jobs/j",
        collection_id="/subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler"
        "/jobCollections/c",
        execution_tag=uuid.uuid4().hex,
        client_request_id=str(uuid.uuid4()),
        expected_time=datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        region="local",
    )


def http_action(uri: str, method: str = "GET", **request: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": method, **request}}


class Tripwire:
    """A listening socket nobody should reach; `connections()` counts what reached it (connected
    clients wait in the accept queue even after they close, so nothing is missed)."""

    def __init__(self, host: str = DENIED_HOST, port: int = 0) -> None:
        self.sock = socket.create_server((host, port))
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        self.count = 0

    def connections(self) -> int:
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return self.count
            conn.close()
            self.count += 1

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def tripwire() -> Iterator[Tripwire]:
    wire = Tripwire()
    yield wire
    wire.close()


class Site:
    """An aiohttp server on one loopback address that records requests; `routes` maps a path to
    a handler (default: 200 'ok')."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], str, bool]] = []
        self.routes: dict[str, Callable[[web.Request], Awaitable[web.StreamResponse]]] = {}
        self.base = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        body = await request.text()
        self.requests.append(
            (request.method, request.path, dict(request.headers), body, bool(peer))
        )
        route = self.routes.get(request.path)
        return await route(request) if route else web.Response(text="ok")

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        async def answer(request: web.Request) -> web.Response:
            return web.Response(status=status, headers={"Location": location})

        self.routes[path] = answer


Serve = Callable[..., Awaitable[Site]]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    runners: list[web.AppRunner] = []

    async def start(host: str = "127.0.0.1", port: int = 0, tls: Any = None) -> Site:
        site = Site()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", site.handle)
        runner = web.AppRunner(app, shutdown_timeout=0.1)
        await runner.setup()
        tcp = web.TCPSite(runner, host, port, ssl_context=tls)
        await tcp.start()
        runners.append(runner)
        bound = runner.addresses[0][1]
        site.base = f"{'https' if tls else 'http'}://{host}:{bound}"
        return site

    yield start
    for runner in runners:
        await runner.cleanup()


@pytest.fixture
async def no_connections(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """Fail the test if anything tries to connect a socket (so no packet can leave)."""
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args)
        raise AssertionError(f"a connection was attempted: {args!r}")

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "sock_connect", refuse)
    monkeypatch.setattr(loop, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield
    assert attempts == []


# -- refusals -------------------------------------------------------------------------------------


async def test_a_denied_address_is_refused_and_receives_nothing(tripwire: Tripwire) -> None:
    async with Actions(Settings(outbound_deny=DENY)) as actions:
        result = await actions.run(
            http_action(f"http://{DENIED_HOST}:{tripwire.port}/hook", "POST", body="x"), context()
        )
    assert not result.succeeded
    assert result.message == f"Http Action - Request to host '{DENIED_HOST}' was refused: {REFUSED}"
    assert tripwire.connections() == 0


@pytest.mark.parametrize(
    "host", ["0x7f000003", "[::ffff:127.0.0.3]", "[::ffff:7f00:3]", "[64:ff9b::7f00:3]"]
)
async def test_other_spellings_of_a_denied_address_are_refused(
    tripwire: Tripwire, host: str
) -> None:
    async with Actions(Settings(outbound_deny=DENY)) as actions:
        result = await actions.run(http_action(f"http://{host}:{tripwire.port}/"), context())
    assert not result.succeeded
    assert " was refused: address " in result.message
    assert "is denied by the outbound policy (--outbound-deny 127.0.0.3/32)" in result.message
    assert tripwire.connections() == 0


@pytest.mark.parametrize("host", ["127.3", "2130706435", "0177.0.0.3", "0x7f.0.0.3"])
async def test_legacy_numeric_spellings_of_a_denied_address_never_connect(
    tripwire: Tripwire, host: str
) -> None:
    # aiohttp rejects most as invalid URLs; what it resolves instead is judged like a name.
    async with Actions(Settings(outbound_deny=DENY)) as actions:
        result = await actions.run(http_action(f"http://{host}:{tripwire.port}/"), context())
    assert not result.succeeded
    assert tripwire.connections() == 0


async def test_a_host_name_is_judged_by_the_address_it_resolves_to(serve: Serve) -> None:
    site = await serve("127.0.0.1")
    settings = Settings(outbound_deny=("127.0.0.1/32", "::1/128"))
    async with Actions(settings) as actions:
        by_name = site.base.replace("127.0.0.1", "localhost")
        result = await actions.run(http_action(by_name), context())
    assert not result.succeeded
    assert result.message.startswith("Http Action - Request to host 'localhost' was refused: ")
    assert "denied by the outbound policy (--outbound-deny 127.0.0.1/32" in result.message
    assert site.requests == []


class Answers(AbstractResolver):
    """DNS as a table (the tests control what a name resolves to, as a rebinding server would)."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(hostname=host, host=a, port=port, family=socket.AF_INET, proto=0, flags=0)
            for a in self.table[host]
        ]

    async def close(self) -> None:
        pass


async def test_a_name_resolving_to_a_denied_address_is_refused(tripwire: Tripwire) -> None:
    dns = Answers({"tenant.example": [DENIED_HOST]})
    async with Actions(Settings(outbound_deny=DENY), resolver=dns) as actions:
        result = await actions.run(
            http_action(f"http://tenant.example:{tripwire.port}/"), context()
        )
    assert result.message == (
        f"Http Action - Request to host 'tenant.example' was refused: {REFUSED}"
    )
    assert tripwire.connections() == 0


async def test_only_the_allowed_addresses_of_a_name_are_connected_to(serve: Serve) -> None:
    site = await serve("127.0.0.1")
    port = int(site.base.rsplit(":", 1)[1])
    wire = Tripwire(DENIED_HOST, port)  # the same port on the denied address
    try:
        dns = Answers({"mixed.example": [DENIED_HOST, "127.0.0.1"]})
        async with Actions(Settings(outbound_deny=DENY), resolver=dns) as actions:
            result = await actions.run(http_action(f"http://mixed.example:{port}/"), context())
        assert result.succeeded, result.message
        assert len(site.requests) == 1
        assert wire.connections() == 0
    finally:
        wire.close()


async def test_private_covers_loopback(serve: Serve) -> None:
    site = await serve("127.0.0.1")
    async with Actions(Settings(outbound_deny=("private",))) as actions:
        result = await actions.run(http_action(site.base), context())
    assert result.message.endswith(
        "was refused: address 127.0.0.1 is denied by the outbound policy (--outbound-deny private)"
    )
    assert site.requests == []


async def test_an_allowed_cidr_wins_over_deny(serve: Serve) -> None:
    site = await serve(DENIED_HOST)
    settings = Settings(outbound_deny=("private", *DENY), outbound_allow=DENY)
    async with Actions(settings) as actions:
        result = await actions.run(http_action(site.base), context())
    assert result.succeeded, result.message
    assert len(site.requests) == 1


@pytest.mark.parametrize(
    ("uri", "item"),
    [
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "metadata"),
        ("http://[::ffff:169.254.169.254]/", "metadata"),
        ("http://100.100.100.200/latest/meta-data/", "metadata"),
        ("https://169.254.10.10/", "link-local"),
        ("http://[fe80::1]:8080/", "link-local"),
    ],
)
@pytest.mark.usefixtures("no_connections")
async def test_metadata_and_link_local_are_refused_by_default_without_connecting(
    uri: str, item: str
) -> None:
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(uri), context())
    assert not result.succeeded
    assert " was refused: address " in result.message
    assert result.message.endswith(f"is denied by the outbound policy (--outbound-deny {item})")


# -- redirects ----------------------------------------------------------------------------------


async def test_a_redirect_to_a_denied_address_is_refused_at_that_hop(
    serve: Serve, tripwire: Tripwire
) -> None:
    site = await serve("127.0.0.1")
    site.redirect("/start", f"http://{DENIED_HOST}:{tripwire.port}/next")
    async with Actions(Settings(outbound_deny=DENY)) as actions:
        result = await actions.run(http_action(f"{site.base}/start"), context())
    assert not result.succeeded
    assert result.message == (
        f"Http Action - Request to host '{DENIED_HOST}' (redirected from host '127.0.0.1')"
        f" was refused: {REFUSED}"
    )
    assert [r[1] for r in site.requests] == ["/start"]
    assert tripwire.connections() == 0


CREDENTIALS = {
    "Cookie": "session=s3cret",
    "X-Functions-Key": "function-key",
    "Ocp-Apim-Subscription-Key": "apim-key",
    "X-Auth-Token": "token",
}


def with_credentials(uri: str) -> dict[str, Any]:
    return http_action(
        uri,
        "POST",
        body="payload",
        headers={**CREDENTIALS, "X-Plain": "kept", "Content-Type": "application/json"},
        authentication={"type": "Basic", "username": "user", "password": "pa55"},
    )


async def test_credentials_are_not_sent_to_another_origin(serve: Serve) -> None:
    first = await serve("127.0.0.1")
    other = await serve("127.0.0.2")
    first.redirect("/start", f"{other.base}/landing", status=307)
    async with Actions(Settings()) as actions:
        result = await actions.run(with_credentials(f"{first.base}/start"), context())
    assert result.succeeded, result.message
    assert "Authorization" in first.requests[0][2]
    method, path, headers, body, _ = other.requests[0]
    assert (method, path, body) == ("POST", "/landing", "payload")  # 307 keeps method and body
    for name in ("Authorization", *CREDENTIALS):
        assert name not in headers, name
    assert headers["X-Plain"] == "kept"
    assert headers["Content-Type"] == "application/json"
    assert "x-ms-execution-tag" in headers


async def test_a_port_change_is_another_origin(serve: Serve) -> None:
    first = await serve("127.0.0.1")
    other = await serve("127.0.0.1")
    first.redirect("/start", f"{other.base}/landing", status=308)
    async with Actions(Settings()) as actions:
        result = await actions.run(with_credentials(f"{first.base}/start"), context())
    assert result.succeeded, result.message
    assert "Authorization" not in other.requests[0][2]
    assert "Cookie" not in other.requests[0][2]


async def test_credentials_follow_a_redirect_within_the_origin(serve: Serve) -> None:
    site = await serve("127.0.0.1")
    site.redirect("/start", "/next", status=307)
    async with Actions(Settings()) as actions:
        result = await actions.run(with_credentials(f"{site.base}/start"), context())
    assert result.succeeded, result.message
    (_, first, _, _, _), (_, second, headers, body, _) = site.requests
    assert (first, second, body) == ("/start", "/next", "payload")
    assert headers["Authorization"] == first_authorization(site)
    for name, value in CREDENTIALS.items():
        assert headers[name] == value


def first_authorization(site: Site) -> str:
    return site.requests[0][2]["Authorization"]


@pytest.mark.parametrize(
    ("status", "method", "then", "with_body"),
    [
        (301, "POST", "GET", False),
        (302, "POST", "GET", False),
        (303, "POST", "GET", False),
        (303, "PUT", "GET", False),
        (302, "PUT", "PUT", True),
        (307, "POST", "POST", True),
        (308, "PUT", "PUT", True),
    ],
)
async def test_redirects_follow_the_method_rules(
    serve: Serve, status: int, method: str, then: str, with_body: bool
) -> None:
    site = await serve("127.0.0.1")
    site.redirect("/start", "/next", status=status)
    action = http_action(f"{site.base}/start", method, body="payload")
    async with Actions(Settings()) as actions:
        result = await actions.run(action, context())
    assert result.succeeded, result.message
    # The whole list: one request to each path, nothing sent twice.
    assert [(m, p) for m, p, *_ in site.requests] == [(method, "/start"), (then, "/next")]
    _, _, headers, body, _ = site.requests[1]
    assert body == ("payload" if with_body else "")
    assert ("Content-Type" in headers) == with_body


async def test_redirects_stop_after_ten_hops(serve: Serve) -> None:
    site = await serve("127.0.0.1")
    site.redirect("/loop", "/loop")
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(f"{site.base}/loop"), context())
    assert result.message == (
        "Http Action - Request to host '127.0.0.1' failed: more than 10 redirects"
        " (the last to host '127.0.0.1')"
    )
    assert len(site.requests) == 11


async def test_the_final_response_after_a_redirect_is_the_outcome(serve: Serve) -> None:
    site = await serve("127.0.0.1")
    site.redirect("/start", "/gone")

    async def gone(request: web.Request) -> web.Response:
        return web.Response(status=404, text="no such page")

    site.routes["/gone"] = gone
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(f"{site.base}/start"), context())
    assert not result.succeeded
    assert result.message.startswith("Http Action - Response from host '127.0.0.1': 'NotFound'")
    assert result.message.endswith(" Body: no such page")


# -- TLS: the client certificate and the downgrade ----------------------------------------------


@pytest.fixture
def pki(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from tests.actions.tls_material import make_pki

    material = make_pki(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(material.ca_file))
    return material


def optional_client_certificate(pki: Any, folder: Path) -> Any:
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "server.pem")
    context.load_verify_locations(cafile=pki.ca_file)
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


async def test_the_client_certificate_is_not_presented_to_another_origin(
    serve: Serve, pki: Any, tmp_path: Path
) -> None:
    tls = optional_client_certificate(pki, tmp_path)
    first = await serve("127.0.0.1", tls=tls)
    other = await serve("127.0.0.1", tls=tls)
    first.redirect("/start", "/again")
    first.redirect("/again", f"{other.base}/landing")
    action = {
        "type": "Https",
        "request": {
            "uri": f"{first.base}/start",
            "method": "GET",
            "authentication": {
                "type": "ClientCertificate",
                "pfx": pki.client_pfx,
                "password": pki.client_password,
            },
        },
    }
    async with Actions(Settings()) as actions:
        result = await actions.run(action, context())
    assert result.succeeded, result.message
    assert [r[4] for r in first.requests] == [True, True]  # presented within the origin
    assert [r[4] for r in other.requests] == [False]


async def test_an_https_redirect_to_http_is_not_followed(
    serve: Serve, pki: Any, tmp_path: Path
) -> None:
    secure = await serve("127.0.0.1", tls=optional_client_certificate(pki, tmp_path))
    plain = await serve("127.0.0.1")
    secure.redirect("/start", f"{plain.base}/landing")
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(f"{secure.base}/start"), context())
    assert not result.succeeded
    assert result.message.startswith("Http Action - Response from host '127.0.0.1': 'Found'")
    assert f"Location: {plain.base}/landing" in result.message
    assert plain.requests == []


# -- the other clients of the shared session, and Service Bus ------------------------------------


async def test_the_oauth_token_request_is_refused_too(serve: Serve, tripwire: Tripwire) -> None:
    target = await serve("127.0.0.1")
    settings = Settings(outbound_deny=DENY, aad_authority=f"http://{DENIED_HOST}:{tripwire.port}")
    action = http_action(
        target.base,
        authentication={
            "type": "ActiveDirectoryOAuth",
            "tenant": "contoso",
            "audience": "https://management.core.windows.net/",
            "clientId": "app",
            "secret": "s3cret",
        },
    )
    async with Actions(settings) as actions:
        result = await actions.run(action, context())
    assert result.message == (
        "Http Action - Request to host '127.0.0.1' failed: OAuth token: the request to host"
        f" '{DENIED_HOST}' was refused: {REFUSED}"
    )
    assert target.requests == []
    assert tripwire.connections() == 0


async def test_a_storage_queue_request_to_a_denied_address_is_refused(tripwire: Tripwire) -> None:
    settings = Settings(
        outbound_deny=DENY,
        storage_queue_url=f"http://{DENIED_HOST}:{tripwire.port}/{{account}}",
    )
    action = {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": "acct",
            "queueName": "q",
            "sasToken": "sv=2019-02-02&sig=abc",
            "message": "hi",
        },
    }
    async with Actions(settings) as actions:
        result = await actions.run(action, context())
    assert not result.succeeded
    assert result.message.startswith(
        "StorageQueue Action - Sending to queue 'q' of storage account 'acct' failed:"
    )
    assert REFUSED in result.message
    assert tripwire.connections() == 0


async def test_a_service_bus_broker_at_a_denied_address_is_refused(tripwire: Tripwire) -> None:
    settings = Settings(
        outbound_deny=DENY, servicebus_url=f"amqp://{DENIED_HOST}:{tripwire.port}", http_timeout=5
    )
    action = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "ns",
            "queueName": "q",
            "authentication": {"sasKeyName": "k", "sasKey": "v"},
            "message": "hi",
        },
    }
    async with Actions(settings) as actions:
        result = await actions.run(action, context())
    assert result.message == (
        "ServiceBusQueue Action - Sending to queue 'q' of namespace 'ns' failed: connection to"
        f" host '{DENIED_HOST}' was refused: {REFUSED}"
    )
    assert tripwire.connections() == 0


# -- end to end: `horarium serve` with its scheduler ---------------------------------------------


def test_a_job_aimed_at_a_denied_address_fails_with_the_refusal_in_its_history(
    tmp_path: Path, tripwire: Tripwire
) -> None:
    from tests.server_process import running_server

    args = ["--outbound-deny", f"{DENIED_HOST}/32,link-local", "--outbound-allow", "169.254.0.0/16"]
    with running_server(tmp_path, engine=True, args=args) as server:
        api = httpx.Client(
            base_url=server.base_url,
            headers=server.auth_headers(),
            params={"api-version": "2016-03-01"},
            timeout=30,
        )
        collection = (
            f"/subscriptions/sub-{uuid.uuid4().hex[:8]}/resourceGroups/rg"
            "/providers/Microsoft.Scheduler/jobCollections/outbound"
        )
        created = api.put(
            collection, json={"location": "West US", "properties": {"sku": {"name": "Standard"}}}
        )
        assert created.status_code in (200, 201), created.text
        uri = f"http://{DENIED_HOST}:{tripwire.port}/hook"
        job = {"action": {"type": "Http", "request": {"uri": uri, "method": "GET"}}}
        put = api.put(f"{collection}/jobs/refused", json={"properties": job})
        assert put.status_code in (200, 201), put.text
        history = wait_until(
            lambda: api.get(f"{collection}/jobs/refused/history").json()["value"],
            "a history entry",
        )
        log = server.log()
    entry = history[0]["properties"]
    assert entry["status"].lower() == "failed"
    assert entry["message"] == (
        f"Http Action - Request to host '{DENIED_HOST}' was refused: {REFUSED}"
    )
    assert tripwire.connections() == 0
    warnings = [line for line in log.splitlines() if "outbound policy is weakened" in line]
    assert warnings == [
        "WARNING: the outbound policy is weakened: actions may reach link-local addresses"
        " (--outbound-allow 169.254.0.0/16); metadata addresses (not in --outbound-deny)"
    ]


def test_the_default_policy_starts_without_a_warning(tmp_path: Path) -> None:
    from tests.server_process import running_server

    with running_server(tmp_path, engine=True) as server:
        assert httpx.get(server.url("/openapi.json"), timeout=10).status_code == 200
        log = server.log()
    assert "outbound policy" not in log
