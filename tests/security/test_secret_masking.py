"""What the API does with secrets it never returns: GET → edit → PUT keeps them, a PATCH keeps
them — while the target (scheme, host and port; storage account; Service Bus namespace) stays
the same. Sent elsewhere, a stored secret must be given again (400 naming it). Through a real
`horarium serve` with its scheduler, whose requests go to an echo server on 127.0.0.1."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pytest

from horarium.model.secrets import MASK
from tests.security.secret_servers import (
    FAR_FUTURE,
    Api,
    Arrival,
    Echo,
    LiveServers,
    error_of,
    wait_until,
)
from tests.server_process import ServerProcess, running_server
from tests.support import fresh_pg_database

PASSWORD = "the-stored-password"
FUNCTIONS_KEY = "the-functions-key"
CODE = "the-function-code"
BEARER = "the-error-bearer"
OTHER_HOST = "http://127.0.0.2:9/elsewhere"  # never reached: refused before it is stored


@dataclass
class World:
    server: ServerProcess
    echo: Echo
    echo_url: str
    other_url: str  # the same echo server on another port: another target
    api: Api
    collection: str

    def job(self, name: str) -> str:
        return self.api.job(self.collection, name)

    def run(self, name: str, path: str, count: int = 1) -> list[Arrival]:
        """POST …/run, and what the echo server received on `path` once it arrived."""
        before = len(self.echo.on(path))
        assert self.api.post(self.job(name) + "/run").status_code == 200
        wait_until(lambda: len(self.echo.on(path)) >= before + count, 30, f"{name} at {path}")
        return self.echo.on(path)[before:]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    root = tmp_path_factory.mktemp(f"masking-{request.param}")
    servers = LiveServers()
    echo = Echo()
    echo.answers["/fails"] = 500
    url, other = servers.serve(echo.app()), servers.serve(echo.app())
    database = fresh_pg_database() if request.param == "postgres" else nullcontext(None)
    try:
        with database as db, running_server(root, database=db, engine=True) as server:
            api = Api(server)
            yield World(server, echo, url, other, api, api.new_collection("P20Premium"))
            api.http.close()
    finally:
        servers.close()


def _basic(password: str = PASSWORD, user: str = "alice") -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _job(world: World, path: str = "/hook", **request: Any) -> dict[str, Any]:
    """A job first due in 2099 (it runs only when asked) with a password, a credential header and a
    function code; its error action sends a bearer token."""
    action = {
        "type": "Http",
        "request": {
            "uri": f"{world.echo_url}{path}?code={CODE}",
            "method": "POST",
            "headers": {"x-functions-key": FUNCTIONS_KEY, "X-Plain": "1"},
            "authentication": {"type": "Basic", "username": "alice", "password": PASSWORD},
            **request,
        },
        "retryPolicy": {"retryType": "None"},
        "errorAction": {
            "type": "Http",
            "request": {
                "uri": f"{world.echo_url}/error",
                "method": "POST",
                "headers": {"Authorization": f"Bearer {BEARER}"},
            },
        },
    }
    return {"properties": {"action": action, "startTime": FAR_FUTURE}}


def _put(world: World, name: str, body: dict[str, Any]) -> dict[str, Any]:
    response = world.api.put(world.job(name), body)
    assert response.status_code in (200, 201), response.text
    return dict(response.json())


def _assert_real_values(arrival: Arrival) -> None:
    assert arrival.headers["Authorization"] == _basic()
    assert arrival.headers["x-functions-key"] == FUNCTIONS_KEY
    assert f"code={CODE}" in arrival.url


def test_get_then_put_back_keeps_every_stored_secret(world: World) -> None:
    _put(world, "roundtrip", _job(world, "/fails"))
    shown = world.api.get(world.job("roundtrip")).json()
    request = shown["properties"]["action"]["request"]
    assert request["uri"].endswith(f"/fails?code={MASK}")
    assert request["headers"] == {"x-functions-key": MASK, "X-Plain": "1"}
    assert request["authentication"] == {"username": "alice", "type": "Basic"}
    error_headers = shown["properties"]["action"]["errorAction"]["request"]["headers"]
    assert error_headers == {"Authorization": MASK}

    shown["properties"]["action"]["request"]["body"] = "edited"
    again = _put(world, "roundtrip", shown)
    assert again["properties"]["action"]["request"]["body"] == "edited"

    errors_before = len(world.echo.on("/error"))
    [main] = world.run("roundtrip", "/fails")
    _assert_real_values(main)
    assert main.body == "edited"
    # The same execution's error action, which follows its failed main action.
    wait_until(lambda: len(world.echo.on("/error")) > errors_before, 30, "the error action")
    [error] = world.echo.on("/error")[errors_before:]
    assert error.headers["Authorization"] == f"Bearer {BEARER}"


def test_a_patch_of_the_uri_alone_to_another_host_does_not_take_the_password_there(
    world: World,
) -> None:
    _put(world, "moving", _job(world))
    moved = world.api.patch(
        world.job("moving"), {"properties": {"action": {"request": {"uri": OTHER_HOST}}}}
    )
    assert moved.status_code == 400, moved.text
    message = error_of(moved)["message"]
    assert message.startswith("properties.action.request.authentication.password: ")
    assert "127.0.0.2" in message
    # Nothing was stored: the job still goes where it went, with its secrets.
    kept = world.api.get(world.job("moving")).json()["properties"]["action"]["request"]
    assert kept["uri"].startswith(world.echo_url)
    _assert_real_values(world.run("moving", "/hook")[0])


def test_another_port_or_scheme_is_another_target(world: World) -> None:
    _put(world, "ports", _job(world))
    host, port = world.echo_url.removeprefix("http://").rsplit(":", 1)
    for uri in (f"http://{host}:{int(port) + 1}/hook", f"https://{host}:{port}/hook"):
        moved = world.api.patch(
            world.job("ports"), {"properties": {"action": {"request": {"uri": uri}}}}
        )
        assert moved.status_code == 400, uri
        assert "authentication.password" in error_of(moved)["message"]


def test_the_same_target_keeps_the_secrets(world: World) -> None:
    _put(world, "same", _job(world))
    patch = {"properties": {"action": {"request": {"uri": f"{world.echo_url}/other?code={MASK}"}}}}
    patched = world.api.patch(world.job("same"), patch)
    assert patched.status_code == 200, patched.text
    _assert_real_values(world.run("same", "/other")[0])


def test_a_new_target_with_every_secret_given_again_is_accepted(world: World) -> None:
    _put(world, "renewed", _job(world))
    request = {
        "uri": f"{world.other_url}/renewed?code=new-code",
        "headers": {"x-functions-key": "new-key", "X-Plain": "1"},
        "authentication": {"type": "Basic", "username": "alice", "password": "new-password"},
    }
    patched = world.api.patch(
        world.job("renewed"), {"properties": {"action": {"request": request}}}
    )
    assert patched.status_code == 200, patched.text
    [arrival] = world.run("renewed", "/renewed")
    assert arrival.headers["Authorization"] == _basic("new-password")
    assert arrival.headers["x-functions-key"] == "new-key"
    assert "code=new-code" in arrival.url


def test_a_masked_header_or_uri_part_is_refused_where_no_secret_is_stored(world: World) -> None:
    masked_header = _job(world)
    masked_header["properties"]["action"]["request"]["headers"]["x-api-key"] = MASK
    refused = world.api.put(world.job("nothing-stored"), masked_header)
    assert refused.status_code == 400
    assert error_of(refused)["message"].startswith("properties.action.request.headers.x-api-key:")
    masked_uri = _job(world, uri=f"{world.echo_url}/x?sig={MASK}")
    refused = world.api.put(world.job("nothing-stored"), masked_uri)
    assert refused.status_code == 400
    assert error_of(refused)["message"].startswith("properties.action.request.uri:")


def test_a_queue_message_sent_to_another_account_or_namespace_needs_its_key(world: World) -> None:
    queue = {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": "account1",
            "queueName": "orders",
            "sasToken": "?sv=2021-08-06&sig=stored-signature",
            "message": "m",
        },
    }
    bus = {
        "type": "ServiceBusQueue",
        "serviceBusQueueMessage": {
            "namespace": "bus-one",
            "queueName": "orders",
            "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "stored"},
            "message": "m",
        },
    }
    for name, action, payload, change, secret in (
        ("q", queue, "queueMessage", {"storageAccount": "account2"}, "sasToken"),
        ("sb", bus, "serviceBusQueueMessage", {"namespace": "bus-two"}, "authentication.sasKey"),
    ):
        _put(world, name, {"properties": {"action": action, "startTime": FAR_FUTURE}})
        same = world.api.patch(
            world.job(name), {"properties": {"action": {payload: {"message": "n"}}}}
        )
        assert same.status_code == 200, same.text
        moved = world.api.patch(world.job(name), {"properties": {"action": {payload: change}}})
        assert moved.status_code == 400, moved.text
        assert error_of(moved)["message"].startswith(f"properties.action.{payload}.{secret}: ")
