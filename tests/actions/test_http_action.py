"""HTTP actions against real aiohttp servers on 127.0.0.1 (no mocks)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from aiohttp import web

from horarium.actions.base import ExecutionContext
from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.actions.action_context import ServeApp, make_context
from tests.support import free_port


def http_action(uri: str, **request: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "GET", **request}}


class Recorder:
    """A sink that remembers every request it got."""

    def __init__(
        self, status: int = 200, body: str = "hello", headers: dict[str, str] | None = None
    ):
        self.requests: list[tuple[str, dict[str, str], str]] = []
        self.status, self.body, self.headers = status, body, headers or {}

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append((request.method, dict(request.headers), await request.text()))
        return web.Response(status=self.status, text=self.body, headers=self.headers)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app


async def test_2xx_succeeds_with_live_message_form_and_scheduler_headers(
    serve: ServeApp, context: ExecutionContext
) -> None:
    sink = Recorder(headers={"X-Test": "yes"}, body="all good")
    base = await serve(sink.app())
    async with Actions(Settings()) as actions:
        result = await actions.run(
            http_action(
                f"{base}/hook?x=1",
                method="post",
                headers={"X-Caller": "me", "Content-Type": "application/json"},
                body='{"a": 1}',
            ),
            context,
        )
    assert result.succeeded, result.message
    method, headers, body = sink.requests[0]
    assert (method, body) == ("POST", '{"a": 1}')
    assert headers["X-Caller"] == "me"
    assert headers["Content-Type"] == "application/json"
    assert headers["x-ms-scheduler-jobid"] == "job-1"
    assert headers["x-ms-scheduler-jobcollectionid"] == "coll-1"
    assert headers["x-ms-scheduler-expected-execution-time"] == "2024-05-01T12:30:00"
    assert headers["x-ms-scheduler-execution-region"] == "West Europe"
    assert headers["x-ms-client-request-id"] == context.client_request_id
    assert headers["x-ms-execution-tag"] == context.execution_tag
    assert result.message.startswith(
        "Http Action - Response from host '127.0.0.1': 'OK' Response Headers: "
    )
    assert "X-Test: yes\r\n" in result.message
    assert "Content-Type" not in result.message  # a content header, as on the live service
    assert result.message.endswith("\r\n Body: all good")


async def test_execution_tag_stays_and_request_id_changes_between_attempts(
    serve: ServeApp,
) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    first = make_context()
    retry = make_context(execution_tag=first.execution_tag)
    async with Actions(Settings()) as actions:
        await actions.run(http_action(base), first)
        await actions.run(http_action(base), retry)
    tags = {h["x-ms-execution-tag"] for _, h, _ in sink.requests}
    ids = {h["x-ms-client-request-id"] for _, h, _ in sink.requests}
    assert tags == {first.execution_tag}
    assert len(ids) == 2


async def test_cookies_set_by_one_execution_are_not_sent_by_another(
    serve: ServeApp, context: ExecutionContext
) -> None:
    # Every execution is a request of its own, as on the live service: a cookie one job's
    # endpoint sets must not reach another job's request to the same host.
    sink = Recorder(headers={"Set-Cookie": "session=job-a-secret; Path=/"})
    # By host name: cookie jars keep no cookies of bare IP addresses.
    base = (await serve(sink.app())).replace("127.0.0.1", "localhost")
    async with Actions(Settings()) as actions:
        await actions.run(http_action(f"{base}/job-a"), context)
        await actions.run(http_action(f"{base}/job-b"), make_context())
    assert len(sink.requests) == 2
    assert "Cookie" not in sink.requests[1][1]


async def test_body_without_content_type_goes_as_utf8_text(
    serve: ServeApp, context: ExecutionContext
) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    async with Actions(Settings()) as actions:
        await actions.run(http_action(base, method="PUT", body="héllo"), context)
    method, headers, body = sink.requests[0]
    assert (method, body) == ("PUT", "héllo")
    assert headers["Content-Type"] == "text/plain; charset=utf-8"


async def test_long_body_is_cut_at_1024_characters(
    serve: ServeApp, context: ExecutionContext
) -> None:
    long_body = "".join(chr(ord("a") + i % 26) for i in range(5000))
    base = await serve(Recorder(body=long_body).app())
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(base), context)
    assert result.succeeded
    assert result.message.endswith(" Body: " + long_body[:1024])


async def test_non_2xx_fails_with_the_status_name(
    serve: ServeApp, context: ExecutionContext
) -> None:
    base = await serve(Recorder(status=404, body="no such thing").app())
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(f"{base}/missing"), context)
    assert not result.succeeded
    assert result.message.startswith("Http Action - Response from host '127.0.0.1': 'NotFound'")
    assert result.message.endswith(" Body: no such thing")


async def test_5xx_fails(serve: ServeApp, context: ExecutionContext) -> None:
    base = await serve(Recorder(status=503, body="busy").app())
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(base), context)
    assert not result.succeeded
    assert "'ServiceUnavailable'" in result.message


async def test_slow_server_fails_after_the_configured_timeout(
    serve: ServeApp, context: ExecutionContext
) -> None:
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="too late")

    app = web.Application()
    app.router.add_get("/", slow)
    base = await serve(app)
    try:
        async with Actions(Settings(http_timeout=0.3)) as actions:
            result = await actions.run(http_action(base + "/"), context)
    finally:
        release.set()
    assert not result.succeeded
    assert result.message == (
        "Http Action - Request to host '127.0.0.1' failed: no response within 0.3 seconds"
    )


async def test_connection_refused_fails(context: ExecutionContext) -> None:
    port = free_port()  # nothing listens there
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(f"http://127.0.0.1:{port}/"), context)
    assert not result.succeeded
    assert result.message == (
        f"Http Action - Request to host '127.0.0.1' failed: "
        f"could not connect to 127.0.0.1:{port}: connection refused"
    )


async def test_basic_authentication_header_and_no_password_in_message(
    serve: ServeApp, context: ExecutionContext
) -> None:
    sink = Recorder(status=401, body="denied")
    base = await serve(sink.app())
    auth = {"type": "Basic", "username": "alice", "password": "s3cret-pässword"}
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(base, authentication=auth), context)
    _, headers, _ = sink.requests[0]
    expected = base64.b64encode("alice:s3cret-pässword".encode()).decode()
    assert headers["Authorization"] == f"Basic {expected}"
    assert not result.succeeded
    assert "'Unauthorized'" in result.message
    assert "s3cret" not in result.message


async def test_secret_echoed_by_the_server_is_masked_in_history(
    serve: ServeApp, context: ExecutionContext
) -> None:
    async def echo(request: web.Request) -> web.Response:
        return web.Response(text=request.headers["Authorization"] + " " + "hunter2-password")

    app = web.Application()
    app.router.add_get("/", echo)
    base = await serve(app)
    auth = {"type": "basic", "username": "bob", "password": "hunter2-password"}
    async with Actions(Settings()) as actions:
        result = await actions.run(http_action(base + "/", authentication=auth), context)
    assert result.succeeded
    assert "hunter2-password" not in result.message
    encoded = base64.b64encode(b"bob:hunter2-password").decode()
    assert encoded not in result.message  # the echoed Authorization header is masked too
    assert result.message.endswith(" Body: Basic *** ***")


async def test_type_is_case_insensitive(serve: ServeApp, context: ExecutionContext) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    async with Actions(Settings()) as actions:
        result = await actions.run(
            {"type": "hTTps", "request": {"uri": base, "method": "get"}}, context
        )
    assert result.succeeded
    assert sink.requests[0][0] == "GET"


async def test_bad_input_fails_naming_the_field(context: ExecutionContext) -> None:
    async with Actions(Settings()) as actions:
        no_uri = await actions.run({"type": "Http", "request": {"method": "GET"}}, context)
        relative = await actions.run(http_action("/only/a/path"), context)
        bad_type = await actions.run({"type": "Ftp"}, context)
        bad_auth = await actions.run(
            http_action("http://127.0.0.1:1/", authentication={"type": "Kerberos"}), context
        )
    assert not no_uri.succeeded
    assert no_uri.message == "Http Action - invalid action: 'request.uri' is required"
    assert "'request.uri' must be an absolute http:// or https:// URL" in relative.message
    assert "'action.type' must be one of Http, Https" in bad_type.message
    assert "'request.authentication.type' must be Basic" in bad_auth.message
