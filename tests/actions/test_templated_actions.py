"""Templated HTTP actions against a real aiohttp server on 127.0.0.1: placeholders filled and
escaped for where they go; without the flag everything is sent as written."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.actions.action_context import COLLECTION_ID, ServeApp, make_context

ODD_JOB_ID = COLLECTION_ID + '/jobs/a b"&c?d<e>#f'  # no job name the API allows is this odd


class Recorder:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append(
            {
                "raw_path": request.raw_path,
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": await request.text(),
            }
        )
        return web.Response(text="ok")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app


def templated(uri: str, **request: Any) -> dict[str, Any]:
    return {
        "type": "Http",
        "request": {"uri": uri, "method": "POST", **request},
        "templated": True,
    }


async def test_placeholders_fill_the_uri_body_and_headers(serve: ServeApp) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    context = make_context(attempt=2, templated=True)
    body = (
        '{"tag": "{{executionTag}}", "due": "{{scheduledTime}}", "at": "{{ executionTime }}",'
        ' "attempt": {{attempt}}, "job": "{{jobName}}", "in": "{{collectionName}}"}'
    )
    action = templated(
        f"{base}/run/{{{{jobName}}}}?tag={{{{executionTag}}}}&due={{{{scheduledTime}}}}",
        headers={"Content-Type": "application/json", "X-Attempt": "try {{attempt}}"},
        body=body,
    )
    before = datetime.now(UTC)
    async with Actions(Settings()) as actions:
        result = await actions.run(action, context)
    assert result.succeeded, result.message
    [got] = sink.requests
    assert got["raw_path"].startswith("/run/job-1?")
    assert got["query"] == {"tag": context.execution_tag, "due": "2024-05-01T12:30:00Z"}
    sent = json.loads(got["body"])
    executed = datetime.fromisoformat(sent.pop("at").replace("Z", "+00:00"))
    assert before <= executed <= datetime.now(UTC)
    assert sent == {
        "tag": context.execution_tag,
        "due": "2024-05-01T12:30:00Z",
        "attempt": 2,
        "job": "job-1",
        "in": "coll-1",
    }
    assert got["headers"]["X-Attempt"] == "try 2"
    assert got["headers"]["x-ms-execution-tag"] == context.execution_tag  # as always


async def test_values_are_escaped_for_the_uri_json_and_xml(serve: ServeApp) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    context = make_context(job_id=ODD_JOB_ID, templated=True)
    json_body = '{"job": "{{jobName}}"}'
    xml_body = "<run job='{{jobName}}'>{{jobName}}</run>"
    async with Actions(Settings()) as actions:
        for content_type, request_body in (
            ("application/json; charset=utf-8", json_body),
            ("application/vnd.run+xml", xml_body),
            ("text/plain", "job {{jobName}}"),
        ):
            action = templated(
                f"{base}/x?job={{{{jobName}}}}&n=1",
                headers={"Content-Type": content_type},
                body=request_body,
            )
            result = await actions.run(action, context)
            assert result.succeeded, result.message
    as_json, as_xml, as_text = sink.requests
    # Percent-encoded: the value cannot end the query parameter or start another.
    assert as_json["query"] == {"job": 'a b"&c?d<e>#f', "n": "1"}
    assert " " not in as_json["raw_path"] and "&c" not in as_json["raw_path"]
    assert json.loads(as_json["body"]) == {"job": 'a b"&c?d<e>#f'}
    assert (
        as_xml["body"]
        == "<run job='a b&quot;&amp;c?d&lt;e&gt;#f'>a b&quot;&amp;c?d&lt;e&gt;#f</run>"
    )
    assert as_text["body"] == 'job a b"&c?d<e>#f'


async def test_without_the_flag_placeholders_are_sent_as_written(serve: ServeApp) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    body = '{"tag": "{{executionTag}}", "x": "{{unknown}}"}'
    action = {
        "type": "Http",
        "request": {
            "uri": f"{base}/x?tag={{{{executionTag}}}}",
            "method": "POST",
            "headers": {"Content-Type": "application/json", "X-Tag": "{{executionTag}}"},
            "body": body,
        },
    }
    async with Actions(Settings()) as actions:
        result = await actions.run(action, make_context())  # templated=False
        flagged_context_only = await actions.run(action, make_context(templated=False))
    assert result.succeeded and flagged_context_only.succeeded
    for got in sink.requests:
        assert got["body"] == body
        assert got["query"] == {"tag": "{{executionTag}}"}
        assert got["headers"]["X-Tag"] == "{{executionTag}}"


async def test_a_header_that_would_hold_a_line_break_is_not_sent(serve: ServeApp) -> None:
    sink = Recorder()
    base = await serve(sink.app())
    context = make_context(job_id=COLLECTION_ID + "/jobs/a\r\nInjected: yes", templated=True)
    action = templated(f"{base}/x", headers={"X-Job": "{{jobName}}"})
    async with Actions(Settings()) as actions:
        result = await actions.run(action, context)
    assert not result.succeeded
    assert result.message == (
        "Http Action - invalid action: 'request.headers.X-Job' holds a control character once"
        " filled"
    )
    assert sink.requests == []


async def test_the_error_action_is_filled_like_the_main_action(serve: ServeApp) -> None:
    """The engine hands the error action with the main action's flag in the context."""
    sink = Recorder()
    base = await serve(sink.app())
    error_action = {
        "type": "Http",
        "request": {"uri": f"{base}/e?a={{{{attempt}}}}", "method": "POST", "body": "{{jobName}}"},
    }
    async with Actions(Settings()) as actions:
        result = await actions.run(error_action, make_context(templated=True))
    assert result.succeeded, result.message
    assert sink.requests[0]["query"] == {"a": "0"}
    assert sink.requests[0]["body"] == "job-1"
