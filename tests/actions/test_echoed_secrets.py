"""A target that echoes what it was sent cannot put a secret into history in any form: masked
before the body is cut, JSON-escaped, URL-encoded or in Base64, and what a cut leaves of one at
the end of the body. Real aiohttp servers on 127.0.0.1, through the actions' runner."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

from aiohttp import web

from horarium.actions.base import ExecutionContext
from horarium.actions.http_history import BODY_CHARS
from horarium.actions.redact import CUT_REST
from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.actions.action_context import ServeApp

KEY = "k3y-0123456789-abcdefghij-ZYXWVUTSRQ"
AWKWARD = 'k3y-with-"quote"-and-\\backslash-0123456789'
PASSWORD = "pa55word-0123456789-secret"


def _echo(shape: str) -> web.Application:
    """Answers with what it got, `shape` choosing how: padded, json, quoted or base64."""

    async def handle(request: web.Request) -> web.Response:
        key = request.headers.get("X-Api-Key", "")
        auth = request.headers.get("Authorization", "")
        if shape == "padded":  # the key straddles the 1,024th character of the body
            text = "p" * (BODY_CHARS - 20) + key + " and more"
        elif shape == "json":
            text = json.dumps({"headers": dict(request.headers)})
        elif shape == "quoted":
            text = f"you sent key={quote(key, safe='')}"
        elif shape == "base64":
            text = "token " + base64.b64encode(key.encode()).decode()
        elif shape == "authorization":
            text = f"auth was {auth}"
        else:  # "ends": the body ends inside the key, as a read limit or a cut would leave it
            text = "p" * 100 + key[: len(key) // 2]
        return web.Response(text=text)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


def _action(base: str, key: str = KEY, **request: Any) -> dict[str, Any]:
    headers = {"X-Api-Key": key}
    return {
        "type": "Http",
        "request": {"uri": f"{base}/", "method": "GET", "headers": headers, **request},
    }


def _no_piece_of(secret: str, message: str) -> None:
    pieces = {secret[i : i + CUT_REST] for i in range(len(secret) - CUT_REST + 1)}
    shown = sorted(p for p in pieces if p in message)
    assert not shown, (shown, message)


async def _run(serve: ServeApp, context: ExecutionContext, shape: str, **kw: Any) -> str:
    base = await serve(_echo(shape))
    async with Actions(Settings()) as actions:
        result = await actions.run(_action(base, **kw), context)
    assert result.succeeded, result.message
    assert "***" in result.message, result.message
    return result.message


async def test_a_key_echoed_across_the_body_cut_shows_no_part_of_it(
    serve: ServeApp, context: ExecutionContext
) -> None:
    message = await _run(serve, context, "padded")
    _no_piece_of(KEY, message)
    # Masked first, then cut: the whole key is one mask, and the text after it is kept.
    assert message.partition(" Body: ")[2] == "p" * (BODY_CHARS - 20) + "*** and more"


async def test_a_key_with_quotes_and_backslashes_echoed_in_json_is_masked(
    serve: ServeApp, context: ExecutionContext
) -> None:
    message = await _run(serve, context, "json", key=AWKWARD)
    _no_piece_of(json.dumps(AWKWARD)[1:-1], message)
    _no_piece_of(AWKWARD, message)


async def test_a_key_echoed_url_encoded_or_in_base64_is_masked(
    serve: ServeApp, context: ExecutionContext
) -> None:
    _no_piece_of(quote(AWKWARD, safe=""), await _run(serve, context, "quoted", key=AWKWARD))
    _no_piece_of(base64.b64encode(KEY.encode()).decode(), await _run(serve, context, "base64"))


async def test_basic_credentials_echoed_back_are_masked(
    serve: ServeApp, context: ExecutionContext
) -> None:
    basic = {"type": "Basic", "username": "alice", "password": PASSWORD}
    message = await _run(serve, context, "authorization", authentication=basic)
    _no_piece_of(base64.b64encode(f"alice:{PASSWORD}".encode()).decode(), message)
    _no_piece_of(PASSWORD, message)


async def test_what_a_cut_leaves_of_a_key_at_the_end_is_masked(
    serve: ServeApp, context: ExecutionContext
) -> None:
    message = await _run(serve, context, "ends")
    _no_piece_of(KEY, message)
    assert message.endswith("p***"), message
