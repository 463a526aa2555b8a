"""Secrets at rest and on the way out, end to end: a real `horarium serve` with its scheduler runs
jobs holding one distinct secret of every kind against servers on 127.0.0.1 that echo what they
receive. The database files (SQLite, with its WAL) and rows (PostgreSQL) hold none of them, the
servers received the real values, and the API, history and log show none of them.

REAL TIME (some seconds): every job runs once, at once; the Service Bus job with a wrong key
waits for RabbitMQ to refuse the login (about 3 s).
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pytest

from horarium.model.secrets import MASK
from tests.queue_services import (
    BROKER,
    KEY,
    KEY_NAME,
    QUEUE_ADDRESS,
    declare,
    rabbit_channel,
    waiting,
)
from tests.security.secret_servers import (
    Api,
    Echo,
    LiveServers,
    Pki,
    Recorder,
    TokenAuthority,
    database_bytes,
    make_pki,
    wait_until,
)
from tests.server_process import ServerProcess, running_server
from tests.support import fresh_pg_database

pytestmark = pytest.mark.rabbitmq

JOBS = ("basic", "userinfo", "bearer", "oauth", "cert", "queue", "bus", "bus-ok")


def _distinct(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex}"


@dataclass
class Planted:
    """One distinct value of every kind of secret."""

    basic_password: str = _distinct("basic-password")
    error_basic_password: str = _distinct("error-basic-password")
    functions_key: str = _distinct("functions-key")
    custom_token: str = _distinct("custom-token")
    code: str = _distinct("code")
    uri_sig: str = _distinct("urisig")
    header_bearer: str = _distinct("header-bearer")
    apim_key: str = _distinct("apim-key")
    userinfo_password: str = _distinct("userinfo-password")
    cookie: str = _distinct("cookie")
    oauth_secret: str = _distinct("oauth-secret")
    sas_sig: str = _distinct("sas-sig")
    bus_key: str = _distinct("bus-key")

    def values(self) -> list[str]:
        return list(vars(self).values())


@dataclass
class World:
    planted: Planted
    pki: Pki
    echo: Echo
    tls: Recorder
    authority: TokenAuthority
    server: ServerProcess
    api: Api
    collection: str
    database: str
    bus_queue: str
    bus_ok_queue: str
    channel: Any

    def job(self, name: str) -> str:
        return self.api.job(self.collection, name)

    def history(self, name: str) -> list[dict[str, Any]]:
        response = self.api.get(self.job(name) + "/history")
        assert response.status_code == 200, response.text
        return [entry["properties"] for entry in response.json()["value"]]

    def every_secret(self) -> list[str]:
        """The planted values, the pfx and its password, and what the engine derives from them:
        the Basic credentials as sent, the bearer tokens obtained."""
        basic = [
            ("alice", self.planted.basic_password),
            ("carol", self.planted.error_basic_password),
            ("bob", self.planted.userinfo_password),
        ]
        derived = [base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in basic]
        pfx = [self.pki.client_pfx, self.pki.client_pfx[100:160], self.pki.client_password]
        return [*self.planted.values(), *pfx, *derived, *self.authority.issued]


NO_RETRY = {"retryType": "None"}


def _http(uri: str, **request: Any) -> dict[str, Any]:
    return {
        "type": "Http",
        "request": {"uri": uri, "method": "POST", **request},
        "retryPolicy": NO_RETRY,
    }


def _basic_auth(user: str, password: str) -> dict[str, str]:
    return {"type": "Basic", "username": user, "password": password}


def _bus(queue: str, key: str) -> dict[str, Any]:
    message = {
        "namespace": "contoso-bus",
        "queueName": queue,
        "authentication": {"type": "SharedAccessKey", "sasKeyName": KEY_NAME, "sasKey": key},
        "message": "hello",
    }
    return {"type": "ServiceBusQueue", "serviceBusQueueMessage": message, "retryPolicy": NO_RETRY}


def _jobs(urls: dict[str, str], p: Planted, pki: Pki, queues: tuple[str, str]) -> dict[str, Any]:
    echo, port = urls["echo"], urls["echo"].rsplit(":", 1)[1]
    basic = _http(
        f"{echo}/basic?code={p.code}&x=1&sig={p.uri_sig}",
        headers={
            "x-functions-key": p.functions_key,
            "X-Custom-Token": p.custom_token,
            "X-Plain": "shown",
        },
        authentication=_basic_auth("alice", p.basic_password),
    )
    basic["errorAction"] = _http(
        f"{echo}/fallback", authentication=_basic_auth("carol", p.error_basic_password)
    )
    oauth = {
        "type": "ActiveDirectoryOAuth",
        "tenant": "contoso.onmicrosoft.com",
        "audience": "https://management.core.windows.net/",
        "clientId": "app",
        "secret": p.oauth_secret,
    }
    certificate = {
        "type": "ClientCertificate",
        "pfx": pki.client_pfx,
        "password": pki.client_password,
    }
    sas = f"?sv=2021-08-06&se=2099-01-01T00%3A00%3A00Z&sp=a&sig={p.sas_sig}"
    queue = {"storageAccount": "acct1", "queueName": "orders", "sasToken": sas, "message": "m"}
    return {
        "basic": basic,
        "userinfo": _http(
            f"http://bob:{p.userinfo_password}@127.0.0.1:{port}/userinfo",
            headers={"Cookie": f"session={p.cookie}"},
        ),
        "bearer": _http(
            f"{echo}/bearer",
            headers={
                "Authorization": f"Bearer {p.header_bearer}",
                "Ocp-Apim-Subscription-Key": p.apim_key,
            },
        ),
        "oauth": _http(f"{echo}/oauth", authentication=oauth),
        "cert": {**_http(f"{urls['tls']}/cert", authentication=certificate), "type": "Https"},
        "queue": {"type": "StorageQueue", "queueMessage": queue, "retryPolicy": NO_RETRY},
        "bus": _bus(queues[0], p.bus_key),
        "bus-ok": _bus(queues[1], KEY),
    }


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    root = tmp_path_factory.mktemp(f"at-rest-{request.param}")
    planted, pki = Planted(), make_pki(root)
    servers = LiveServers()
    echo, tls, authority = Echo(), Recorder(), TokenAuthority(planted.oauth_secret)
    echo.answers["/basic"] = 500  # so that the error action runs too
    urls = {"echo": servers.serve(echo.app()), "tls": servers.sink(tls, pki.server_context)}
    env = {
        "SSL_CERT_FILE": str(pki.ca_file),
        "HORARIUM_STORAGE_QUEUE_URL": urls["echo"] + "/{account}",
        "HORARIUM_SERVICEBUS_URL": BROKER,
        "HORARIUM_SERVICEBUS_QUEUE_ADDRESS": QUEUE_ADDRESS,
    }
    args = ["--aad-authority", servers.serve(authority.app())]
    try:
        with rabbit_channel() as channel:
            queues = (declare(channel), declare(channel))
            with (
                _database(request.param) as database,
                running_server(
                    root / "service", database=database, engine=True, env=env, args=args
                ) as server,
            ):
                api = Api(server)
                collection = api.new_collection("P20Premium")
                for name, action in _jobs(urls, planted, pki, queues).items():
                    response = api.put(
                        api.job(collection, name), {"properties": {"action": action}}
                    )
                    assert response.status_code == 201, response.text
                url = database or f"sqlite:///{server.data_dir / 'horarium.sqlite3'}"
                world = World(
                    planted,
                    pki,
                    echo,
                    tls,
                    authority,
                    server,
                    api,
                    collection,
                    url,
                    *queues,
                    channel,
                )
                for name in JOBS:
                    expected = 2 if name == "basic" else 1
                    wait_until(
                        lambda n=name, e=expected: len(world.history(n)) >= e, 60, f"{name} ran"
                    )
                yield world
                api.http.close()
    finally:
        servers.close()


def _database(kind: str) -> Any:
    return fresh_pg_database() if kind == "postgres" else nullcontext(None)


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_the_database_holds_no_secret(world: World) -> None:
    stored = database_bytes(world.database)
    assert b"sealed" in stored  # the secrets are there, sealed
    for secret in world.every_secret():
        assert secret.encode() not in stored, secret


def test_the_engine_sent_the_real_secrets(world: World) -> None:
    p = world.planted
    [basic] = world.echo.on("/basic")
    assert basic.headers["Authorization"] == _basic("alice", p.basic_password)
    assert basic.headers["x-functions-key"] == p.functions_key
    assert basic.headers["X-Custom-Token"] == p.custom_token
    assert f"code={p.code}" in basic.url and f"sig={p.uri_sig}" in basic.url
    [fallback] = world.echo.on("/fallback")
    assert fallback.headers["Authorization"] == _basic("carol", p.error_basic_password)
    [userinfo] = world.echo.on("/userinfo")
    assert userinfo.headers["Authorization"] == _basic("bob", p.userinfo_password)
    assert userinfo.headers["Cookie"] == f"session={p.cookie}"
    [bearer] = world.echo.on("/bearer")
    assert bearer.headers["Authorization"] == f"Bearer {p.header_bearer}"
    assert bearer.headers["Ocp-Apim-Subscription-Key"] == p.apim_key
    assert world.authority.secrets_seen == [p.oauth_secret]
    [oauth] = world.echo.on("/oauth")
    assert oauth.headers["Authorization"] == f"Bearer {world.authority.issued[0]}"
    assert [r.client_subject for r in world.tls.on("/cert")] == [world.pki.client_subject]
    [queued] = world.echo.on("/acct1/orders/messages")
    assert f"sig={p.sas_sig}" in queued.url
    assert waiting(world.channel, world.bus_ok_queue) == 1  # the sealed key logged in
    assert waiting(world.channel, world.bus_queue) == 0  # the wrong key did not


def test_history_masks_every_secret_an_endpoint_echoed(world: World) -> None:
    history = {name: world.history(name) for name in JOBS}
    text = repr(history)
    for secret in world.every_secret():
        assert secret not in text, secret
    # The echoes did carry them: masked in place.
    failed, ok = history["basic"][1], history["basic"][0]
    assert "code=***" in failed["message"] and "sig=***" in failed["message"]
    assert "'x-functions-key': '***'" in failed["message"]
    assert (
        "'X-Custom-Token': '***'" in failed["message"] and "'X-Plain': 'shown'" in failed["message"]
    )
    assert f"'Authorization': 'Basic {MASK}'" in ok["message"]
    assert f"'Authorization': 'Bearer {MASK}'" in history["oauth"][0]["message"]
    assert f"'Authorization': '{MASK}'" in history["bearer"][0]["message"]
    assert f"'Authorization': 'Basic {MASK}'" in history["userinfo"][0]["message"]
    assert f"'Cookie': '{MASK}'" in history["userinfo"][0]["message"]
    assert "sig=***" in history["queue"][0]["message"]
    assert history["bus"][0]["status"] == "Failed"


def test_get_and_list_return_no_secret_and_mask_what_stays_on_the_wire(world: World) -> None:
    listed = world.api.get(world.api.collection(world.collection) + "/jobs")
    texts = [listed.text] + [world.api.get(world.job(name)).text for name in JOBS]
    for secret in world.every_secret():
        assert all(secret not in text for text in texts), secret
    basic = world.api.get(world.job("basic")).json()["properties"]["action"]
    assert basic["request"]["uri"].endswith(f"/basic?code={MASK}&x=1&sig={MASK}")
    assert basic["request"]["headers"] == {
        "x-functions-key": MASK,
        "X-Custom-Token": MASK,
        "X-Plain": "shown",
    }
    assert basic["request"]["authentication"] == {"username": "alice", "type": "Basic"}
    assert basic["errorAction"]["request"]["authentication"] == {
        "username": "carol",
        "type": "Basic",
    }
    userinfo = world.api.get(world.job("userinfo")).json()["properties"]["action"]["request"]
    assert userinfo["uri"].startswith(f"http://bob:{MASK}@127.0.0.1:")
    assert userinfo["headers"] == {"Cookie": MASK}
    bearer = world.api.get(world.job("bearer")).json()["properties"]["action"]["request"]
    assert bearer["headers"] == {"Authorization": MASK, "Ocp-Apim-Subscription-Key": MASK}


def test_the_log_shows_no_secret(world: World) -> None:
    log = world.server.log()
    assert "listening" in log
    for secret in world.every_secret():
        assert secret not in log, secret
