"""A job cannot frame its own HTTP request: hop-by-hop and framing headers, and control
characters in header values, are refused when the job is written, and a definition stored
before that rule never reaches the wire with them (no request smuggling)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions.runner import Actions
from horarium.config import Settings
from horarium.engine.scheduler import Scheduler
from horarium.model.names import CollectionName
from horarium.store.core.schema import job_history
from horarium.store.resources import collections as collections_store
from horarium.store.resources import jobs as jobs_store
from tests.api.api_client import Api, error_of, http_job
from tests.database_fixtures import db as db
from tests.database_fixtures import db_url as db_url
from tests.security.raw_http import raw_http_server

SMUGGLING_BODY = "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: victim\r\n\r\n"
FORBIDDEN = [
    "Transfer-Encoding",
    "transfer-encoding",
    "Content-Length",
    "CONNECTION",
    "Keep-Alive",
    "TE",
    "Trailer",
    "Upgrade",
    "Host",
    "Proxy-Authorization",
    "proxy-connection",
]


def _with_headers(headers: dict[str, str], *, error_action: bool = False) -> dict[str, Any]:
    body = http_job()
    request = {"uri": "http://127.0.0.1:9/hook", "method": "POST", "headers": headers}
    if error_action:
        body["properties"]["action"]["errorAction"] = {"type": "Http", "request": request}
    else:
        body["properties"]["action"]["request"] = request
    return body


@pytest.mark.parametrize("name", FORBIDDEN)
def test_a_job_may_not_set_a_framing_or_hop_by_hop_header(api: Api, name: str) -> None:
    collection = api.new_collection()
    for error_action, where in ((False, "action"), (True, "action.errorAction")):
        path = api.job(collection, "framed")
        response = api.put(path, _with_headers({name: "chunked"}, error_action=error_action))
        assert response.status_code == 400, response.text
        message = error_of(response)["message"]
        assert message.startswith(f"properties.{where}.request.headers.{name}: "), message
        assert "hop-by-hop or framing headers" in message
        assert api.get(path).status_code == 404  # nothing stored


def test_a_patch_may_not_add_a_framing_header(api: Api) -> None:
    collection = api.new_collection()
    path = api.job(collection, "patched")
    assert api.put(path, _with_headers({"X-Ok": "1"})).status_code == 201
    change = {"properties": {"action": {"request": {"headers": {"Transfer-Encoding": "chunked"}}}}}
    response = api.patch(path, change)
    assert response.status_code == 400
    assert "headers.Transfer-Encoding" in error_of(response)["message"]
    assert api.get(path).json()["properties"]["action"]["request"]["headers"] == {"X-Ok": "1"}


def test_other_headers_stay_allowed(api: Api) -> None:
    """Only the listed names are refused: ordinary end-to-end headers a job sends still work."""
    headers = {
        "Content-Type": "application/json",
        "Authorization": "Bearer abc",
        "Accept": "*/*",
        "Cookie": "a=1",
        "Expect": "100-continue",
        "X-Proxy-Id": "not a Proxy- header",
        "X-Forwarded-Host": "example.org",
        "Tab-Inside": "a\tb",
        "Trailers": "not the Trailer header",
    }
    collection = api.new_collection()
    response = api.put(api.job(collection, "allowed"), _with_headers(headers))
    assert response.status_code == 201, response.text
    shown = response.json()["properties"]["action"]["request"]["headers"]
    # Credential headers are accepted too, and come back masked (docs/security.md).
    assert shown == {**headers, "Authorization": "***", "Cookie": "***"}


@pytest.mark.parametrize("value", ["a\rb", "a\nb", "a\x01b", "\x1f", "a\x7fb", "a\x0bb"])
def test_control_characters_in_header_values_are_refused(api: Api, value: str) -> None:
    collection = api.new_collection()
    path = api.job(collection, "controlled")
    response = api.put(path, _with_headers({"X-Value": value}))
    assert response.status_code == 400, response.text
    message = error_of(response)["message"]
    assert message.startswith("properties.action.request.headers.X-Value: contains the control")
    assert f"U+{ord(value.strip('ab')):04X}" in message
    assert api.get(path).status_code == 404


# -- what reaches the wire -------------------------------------------------------------------


async def test_the_raw_server_sees_a_smuggled_request() -> None:
    """The detector itself: a request carrying both framing headers, sent by hand."""
    async with raw_http_server() as raw:
        port = int(raw.url.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = SMUGGLING_BODY.encode()
        writer.write(
            b"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        answers = b""
        while answers.count(b"HTTP/1.1 200") < 2:
            answers += await reader.read(1024)
        writer.close()
        await writer.wait_closed()
    assert [seen.target for seen in raw.requests] == ["/hook", "/smuggled"]
    assert len(raw.smuggling()) == 2


@dataclass
class _Clock:
    at: datetime

    def now(self) -> datetime:
        return self.at


async def _plant(db: AsyncEngine, jobs: dict[str, dict[str, Any]], now: datetime) -> dict[str, int]:
    """Job rows written with the store API, as a database from before the rule holds them:
    each an Http POST of SMUGGLING_BODY to `uri`, with the given headers, no retries."""
    ids: dict[str, int] = {}
    async with db.begin() as conn:
        collection = await collections_store.insert_one(
            conn,
            CollectionName("sub", "rg", "planted"),
            location="West US",
            state="Enabled",
            sku="Standard",
            document={},
            now=now,
        )
        for name, request in jobs.items():
            definition = {
                "action": {
                    "type": "Http",
                    "request": {"method": "POST", "body": SMUGGLING_BODY, **request},
                    "retryPolicy": {"retryType": "None"},
                }
            }
            ids[name] = await jobs_store.insert_one(
                conn,
                collection_id=collection,
                name=name,
                definition=definition,
                state="Enabled",
                next_execution_at=now,
                now=now,
            )
    return ids


async def _messages(db: AsyncEngine, job_id: int) -> list[tuple[str, str]]:
    async with db.connect() as conn:
        rows = await conn.execute(
            select(job_history.c.status, job_history.c.message).where(
                job_history.c.job_id == job_id
            )
        )
        return [(row.status, row.message) for row in rows]


async def test_a_stored_definition_with_framing_headers_does_not_smuggle(db: AsyncEngine) -> None:
    now = datetime.now(UTC)
    settings = Settings(http_timeout=5.0, poll_interval=0.05, grace_period=60.0)
    async with raw_http_server() as raw:
        jobs = {
            "chunked": {"uri": f"{raw.url}/chunked", "headers": {"Transfer-Encoding": "chunked"}},
            "lower": {"uri": f"{raw.url}/lower", "headers": {"transfer-encoding": "chunked"}},
            "upgrade": {
                "uri": f"{raw.url}/upgrade",
                "headers": {"Connection": "Upgrade", "Upgrade": "h2c"},
            },
            "host": {"uri": f"{raw.url}/host", "headers": {"Host": "victim"}},
            "proxy": {"uri": f"{raw.url}/proxy", "headers": {"Proxy-Authorization": "x"}},
            # A stored Content-Length is dropped, as it always was: the client frames the body.
            "length": {"uri": f"{raw.url}/length", "headers": {"Content-Length": "0"}},
            "plain": {"uri": f"{raw.url}/plain", "headers": {"X-Job": "plain"}},
        }
        ids = await _plant(db, jobs, now)
        async with Actions(settings) as actions:
            scheduler = Scheduler(db, settings, actions, clock=_Clock(now))
            assert await scheduler.drain() == len(jobs)
            await scheduler.stop()

    assert raw.smuggling() == []
    assert sorted(seen.target for seen in raw.requests) == ["/length", "/plain"]
    for seen in raw.requests:
        assert seen.body == SMUGGLING_BODY.encode()  # the body, framed by its Content-Length
    refused = {
        "chunked": "Transfer-Encoding",
        "lower": "transfer-encoding",
        "upgrade": "Connection",
        "host": "Host",
        "proxy": "Proxy-Authorization",
    }
    for name, header in refused.items():
        [(status, message)] = await _messages(db, ids[name])
        assert status == "Failed"
        assert f"'request.headers.{header}': a job may not set hop-by-hop" in message, message
    for name in ("length", "plain"):
        assert [status for status, _ in await _messages(db, ids[name])] == ["Completed"]
