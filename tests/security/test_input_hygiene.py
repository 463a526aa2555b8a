"""No request body can store a value the service cannot give back: lone surrogates, NUL
characters and properties given twice are refused (400, naming the field) when the body is
read, on every write, and nothing is stored. Names in the URL cannot break a response either."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from horarium.model.names import CollectionName
from horarium.store.core.db import create_engine
from horarium.store.resources import collections as collections_store
from tests.api.api_client import Api, database_url, error_of, http_job
from tests.server_process import ServerProcess, running_server

COLLECTION = '{"location": "West US", "properties": {"sku": {"name": "Standard"}}%s}'
JOB = (
    '{"properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/hook",'
    ' "method": "POST"%s}}%s}}'
)
MONTHLY = (
    r', "recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences":'
    r' [{"day": "\udc00", "occurrence": 1}]}}'
)
SURROGATE = r"(\ud800), which is not valid Unicode"
NUL = r"contains a NUL character (\u0000)"

# (body text as sent, with JSON escapes written out; the start of the expected message)
BAD_COLLECTIONS = [
    (COLLECTION % r', "tags": {"x": "\ud800"}', rf"tags.x: contains a lone surrogate {SURROGATE}"),
    (COLLECTION % r', "tags": {"a\udc00": "v"}', r"tags.a\udc00: the property name contains"),
    (COLLECTION % r', "tags": {"k": "v\u0000"}', rf"tags.k: {NUL}"),
    (COLLECTION % r', "tags": {"k\u0000": "v"}', rf"tags.k\u0000: the property name {NUL}"),
    (
        '{"properties": {"sku": {"name": "Standard", "name": "Free"}}}',
        "properties.sku.name: duplicate key",
    ),
    (
        '{"properties": {"sku": {"name": "Standard", "NAME": "Free"}}}',
        "properties.sku.NAME: duplicate key ('name' is given too, with another value;",
    ),
    (
        '{"tags": {"env": "a", "Env": "b"}, "properties": {"sku": {"name": "Standard"}}}',
        "tags.Env: duplicate key",
    ),
    (
        r'{"location": "\udfff", "properties": {"sku": {"name": "Standard"}}}',
        r"location: contains a lone surrogate (\udfff)",
    ),
]
BAD_JOBS = [
    (
        JOB % (', "uri": "http://127.0.0.3:9/other"', ""),
        "properties.action.request.uri: duplicate key",
    ),
    (
        JOB % (', "URI": "http://127.0.0.3:9/other"', ""),
        "properties.action.request.URI: duplicate key ('uri' is given too",
    ),
    (JOB % ("", r', "startTime": "2030-01-01T00:00:00\u0000"'), rf"properties.startTime: {NUL}"),
    (JOB % (r', "body": "a\ud800b"', ""), r"properties.action.request.body: contains a lone"),
    (
        JOB % (r', "headers": {"X-\ud83d": "1"}', ""),
        r"properties.action.request.headers.X-\ud83d: the property name contains a lone",
    ),
    (JOB % ("", MONTHLY), r"properties.recurrence.schedule.monthlyOccurrences[0].day: contains a"),
    (
        '{"properties": {}, "properties": {}}',
        "properties: duplicate key",
    ),
]


def _refused(api: Api, method: str, path: str, text: str, message: str) -> None:
    response = api.request(method, path, content=text.encode())
    assert response.status_code == 400, (text, response.text)
    assert error_of(response)["code"] == "BadRequest"
    assert error_of(response)["message"].startswith(message), (text, response.text)


def _listed(api: Api) -> list[str]:
    """The subscription's collections (the list must still answer)."""
    response = api.get(
        f"/subscriptions/{api.subscription}/providers/Microsoft.Scheduler/jobCollections"
    )
    assert response.status_code == 200, response.text
    return [c["name"] for c in response.json()["value"]]


@pytest.mark.parametrize(("text", "message"), BAD_COLLECTIONS)
def test_a_collection_with_unstorable_text_is_refused_and_not_stored(
    api: Api, text: str, message: str
) -> None:
    _refused(api, "PUT", api.collection("fresh"), text, message)
    assert api.get(api.collection("fresh")).status_code == 404
    assert _listed(api) == []
    name = api.new_collection()
    before = api.get(api.collection(name)).json()
    _refused(api, "PUT", api.collection(name), text, message)
    _refused(api, "PATCH", api.collection(name), text, message)
    assert api.get(api.collection(name)).json() == before
    assert _listed(api) == [name]


@pytest.mark.parametrize(("text", "message"), BAD_JOBS)
def test_a_job_with_unstorable_text_or_a_key_given_twice_is_refused(
    api: Api, text: str, message: str
) -> None:
    collection = api.new_collection()
    path = api.job(collection, "j1")
    _refused(api, "PUT", path, text, message)
    assert api.get(path).status_code == 404
    _refused(api, "POST", path + "/upcoming", text, message)
    assert api.put(path, http_job()).status_code == 201
    before = api.get(path).json()
    _refused(api, "PUT", path, text, message)
    _refused(api, "PATCH", path, text, message)
    assert api.get(path).json() == before
    assert api.get(api.collection(collection) + "/jobs").status_code == 200
    assert _listed(api) == [collection]


def test_the_same_value_under_two_spellings_is_accepted(api: Api) -> None:
    """The service writes `occurrence` and `Occurrence` (same value) in monthlyOccurrences;
    a GET-modify-PUT round trip sends both back, and must keep working."""
    collection = api.new_collection()
    path = api.job(collection, "monthly")
    body = http_job(
        recurrence={
            "frequency": "Month",
            "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": 1}]},
        }
    )
    assert api.put(path, body).status_code == 201, api.put(path, body).text
    read = api.get(path).json()
    [occurrence] = read["properties"]["recurrence"]["schedule"]["monthlyOccurrences"]
    assert occurrence == {"day": "friday", "occurrence": 1, "Occurrence": 1}
    again = api.put(path, read)
    assert again.status_code == 200, again.text
    assert again.json()["properties"]["recurrence"] == read["properties"]["recurrence"]


def test_escaped_characters_that_are_valid_unicode_are_kept(api: Api) -> None:
    """A surrogate pair is one character; tab and other controls are fine outside headers."""
    text = COLLECTION % r', "tags": {"emoji": "\ud83d\ude00", "tab": "a\tb", "bell": "\u0007"}'
    response = api.request("PUT", api.collection("kept"), content=text.encode())
    assert response.status_code == 201, response.text
    assert response.json()["tags"] == {"emoji": "\U0001f600", "tab": "a\tb", "bell": "\x07"}


@pytest.mark.parametrize(
    "where",
    [
        "/subscriptions/s%ED%A0%80/providers/Microsoft.Scheduler/jobCollections",
        "/subscriptions/{sub}/resourceGroups/rg%ED%A0%80/providers/Microsoft.Scheduler/jobCollections",
        "{collection}%ED%A0%80",
        "{collection}%ED%A0%80/jobs/j",
        "{collection}/jobs/j%ED%A0%80",
        "{collection}/jobs/j%ED%A0%80/history",
        "{collection}/jobs/j%ED%A0%80/upcoming",
        "{collection}/jobs/j%00",
        "{collection}/jobs?$filter=state%20eq%20%ED%A0%80",
        "{collection}/jobs?$top=%ED%A0%80",
        "{collection}/jobs?api-version=%ED%A0%80",
    ],
)
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_a_surrogate_or_nul_in_the_url_is_never_a_server_error(
    api: Api, where: str, method: str
) -> None:
    """Percent-encoded UTF-8 of a surrogate (ED A0 80) or NUL in a name or a query value."""
    collection = api.new_collection()
    path = where.format(sub=api.subscription, collection=api.collection(collection))
    separator = "&" if "?" in path else "?"
    version = "" if "api-version" in path else f"{separator}api-version=2016-03-01"
    body = None if method != "PUT" else http_job()
    response = api.http.request(method, path + version, json=body)
    assert 400 <= response.status_code < 500, response.text
    error_of(response)
    assert _listed(api) == [collection]


def test_a_value_stored_before_the_check_still_renders(tmp_path: Path) -> None:
    """A tag with a lone surrogate written by an older version (SQLite could store it; a
    PostgreSQL text cannot hold one, so this is SQLite only): the collection and the list still
    answer, with the character as a JSON escape."""
    with running_server(tmp_path) as server:
        api = Api(server)
        try:
            _render_a_stored_surrogate(server, api)
        finally:
            api.http.close()


def _render_a_stored_surrogate(server: ServerProcess, api: Api) -> None:

    async def plant() -> None:
        engine = create_engine(database_url(server))
        try:
            async with engine.begin() as conn:
                await collections_store.insert_one(
                    conn,
                    CollectionName(api.subscription, "rg1", "old"),
                    location="West US",
                    state="Enabled",
                    sku="Standard",
                    document={"tags": {"x": "\ud800"}},
                    now=datetime.now(UTC),
                )
        finally:
            await engine.dispose()

    asyncio.run(plant())
    response = api.get(api.collection("old"))
    assert response.status_code == 200, response.text
    assert b'"x":"\\ud800"' in response.content
    assert response.json()["tags"] == {"x": "\ud800"}
    assert _listed(api) == ["old"]


# A name part of the URL with a trailing newline or a control character inside: (where, field).
BAD_NAMES = [
    ("/subscriptions/{sub}%0A/resourceGroups/rg1{rest}", "subscriptionId"),
    ("/subscriptions/{sub}/resourceGroups/rg1%0A{rest}", "resourceGroupName"),
    ("/subscriptions/{sub}/resourceGroups/rg%091{rest}", "resourceGroupName"),
    ("{collection}%0A", "jobCollectionName"),
    ("{collection}/jobs/job1%0A", "jobName"),
    ("{collection}/jobs/jo%0Db1", "jobName"),
    ("{collection}/jobs/job1%00", "jobName"),
]


@pytest.mark.parametrize(("where", "field"), BAD_NAMES)
def test_a_name_ending_in_a_newline_or_holding_a_control_character_is_refused(
    api: Api, where: str, field: str
) -> None:
    """Every name must match its rule as a whole: `…/jobs/job1%0A` is not `job1`."""
    collection = api.new_collection()
    rest = f"/providers/Microsoft.Scheduler/jobCollections/{collection}"
    path = where.format(sub=api.subscription, rest=rest, collection=api.collection(collection))
    body = http_job() if "/jobs/" in path else {"location": "West US", "properties": {}}
    response = api.http.put(path, params={"api-version": "2016-03-01"}, json=body)
    assert response.status_code == 400, response.text
    error = error_of(response)
    assert error["code"] == "InvalidResourceName" and error["message"].startswith(field), error
    assert _listed(api) == [collection]
    jobs = api.get(f"{api.collection(collection)}/jobs")
    assert jobs.status_code == 200 and jobs.json()["value"] == [], jobs.text


@pytest.mark.parametrize(
    ("request_part", "where"),
    [
        ({"method": "GET\n"}, "properties.action.request.method"),
        ({"headers": {"X-Api-Key\n": "v"}}, "properties.action.request.headers"),
    ],
)
def test_a_method_or_header_name_ending_in_a_newline_is_refused(
    api: Api, request_part: dict[str, object], where: str
) -> None:
    collection = api.new_collection()
    job = http_job()
    job["properties"]["action"]["request"].update(request_part)
    response = api.put(api.job(collection, "job1"), job)
    assert response.status_code == 400, response.text
    assert where in error_of(response)["message"], response.text
