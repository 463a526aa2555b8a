"""Authentication and authorization of the management API, through a real `horarium serve` on
SQLite and PostgreSQL: 401 for a missing or bad credential, 403 outside a key's subscriptions
or beyond its role, the audit log, and keys kept only as hashes."""

from __future__ import annotations

import hashlib
import json
import uuid

import httpx
import pytest

from tests.security.key_tools import (
    COLLECTION_BODY,
    JOB_BODY,
    client,
    collection_path,
    expired_key,
    key_rows,
    keys_cli,
    new_key,
)
from tests.server_process import ServerProcess


def _subscription() -> str:
    return f"sub-{uuid.uuid4().hex[:8]}"


def _refusal(response: httpx.Response, status: int, code: str) -> str:
    """The ARM error message of a refused request (asserts its status, shape and code)."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return str(body["error"]["message"])


def _unauthenticated(response: httpx.Response) -> str:
    message = _refusal(response, 401, "AuthenticationFailed")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    return message


# -- 401 -----------------------------------------------------------------------------------------


def test_a_request_without_authorization_is_401_with_a_bearer_challenge(
    server: ServerProcess,
) -> None:
    with client(server, None) as http:
        message = _unauthenticated(http.get(collection_path(_subscription())))
        assert "'Authorization' header is missing" in message
        # Every method, and paths that match no route, need a caller too.
        _unauthenticated(http.put(collection_path(_subscription()), json=COLLECTION_BODY))
        _unauthenticated(http.get("/subscriptions/x/nothing-here"))


def test_a_header_that_is_not_a_bearer_token_is_401(server: ServerProcess) -> None:
    with client(server, None) as http:
        response = http.get(
            collection_path(_subscription()), headers={"Authorization": "Basic YWxpY2U6czNjcmV0"}
        )
    message = _unauthenticated(response)
    assert "not a bearer token" in message and "YWxpY2U6czNjcmV0" not in message


@pytest.mark.parametrize("token", ["garbage-token-1234", "hrm_garbage-token-1234"])
def test_an_unknown_token_is_401_and_the_answer_never_repeats_it(
    server: ServerProcess, token: str
) -> None:
    with client(server, token) as http:
        response = http.get(collection_path(_subscription()))
    message = _unauthenticated(response)
    assert "garbage-token-1234" not in response.text
    assert "not" in message and ("API key" in message)
    assert "garbage-token-1234" not in server.log()


def test_an_expired_key_is_401_saying_it_expired(server: ServerProcess) -> None:
    subscription = _subscription()
    token = expired_key(server, subscription)
    with client(server, token) as http:
        message = _unauthenticated(http.get(collection_path(subscription)))
    assert f"'expired-{subscription}' expired at" in message and token not in message


def test_a_revoked_key_is_refused_from_the_next_request_on(server: ServerProcess) -> None:
    subscription = _subscription()
    name = f"short-lived-{uuid.uuid4().hex[:6]}"
    token = new_key(server, subscription, "--name", name)
    with client(server, token) as http:
        assert http.put(collection_path(subscription), json=COLLECTION_BODY).status_code == 201
        revoked = keys_cli(server, "revoke", name)
        assert revoked.returncode == 0, revoked.stderr
        message = _unauthenticated(http.get(collection_path(subscription)))
    assert "unknown or revoked" in message


def test_the_openapi_document_and_docs_stay_public(server: ServerProcess) -> None:
    with client(server, None) as http:
        assert http.get("/openapi.json").status_code == 200
        assert http.get("/docs").status_code == 200
        scheme = http.get("/openapi.json").json()["components"]["securitySchemes"]["bearer"]
    assert scheme["scheme"] == "bearer"


# -- 403: subscriptions ----------------------------------------------------------------------------


def test_a_key_cannot_touch_another_subscription(server: ServerProcess) -> None:
    mine, theirs = _subscription(), _subscription()
    with client(server, server.token) as admin:
        assert admin.put(collection_path(theirs), json=COLLECTION_BODY).status_code == 201
        job = collection_path(theirs) + "/jobs/j1"
        assert admin.put(job, json=JOB_BODY).status_code == 201
    name = f"only-{mine}"
    with client(server, new_key(server, mine, "--name", name)) as http:
        refusals = [
            ("jobCollections/read", http.get(collection_path(theirs))),
            ("jobCollections/write", http.put(collection_path(theirs), json=COLLECTION_BODY)),
            ("jobCollections/jobs/read", http.get(job)),
            ("jobCollections/jobs/write", http.put(job, json=JOB_BODY)),
            ("jobCollections/jobs/run/action", http.post(job + "/run")),
            ("jobCollections/delete", http.delete(collection_path(theirs))),
            (
                "jobCollections/read",
                http.get(f"/subscriptions/{theirs}/providers/Microsoft.Scheduler/jobCollections"),
            ),
        ]
        for action, response in refusals:
            message = _refusal(response, 403, "AuthorizationFailed")
            assert f"The client '{name}'" in message, message
            assert f"perform action 'Microsoft.Scheduler/{action}'" in message, message
            assert f"over scope '/subscriptions/{theirs}" in message, message
        # Its own subscription works.
        assert http.put(collection_path(mine), json=COLLECTION_BODY).status_code == 201
    with client(server, server.token) as admin:
        assert admin.get(job).status_code == 200  # untouched


def test_a_key_reaches_its_subscription_in_any_casing(server: ServerProcess) -> None:
    subscription = f"Sub-{uuid.uuid4().hex[:8].upper()}"
    with client(server, new_key(server, subscription)) as http:
        response = http.put(collection_path(subscription.lower()), json=COLLECTION_BODY)
        assert response.status_code == 201, response.text
        assert http.get(collection_path(subscription.upper())).status_code == 200


def test_a_key_for_every_subscription_reaches_them_all(server: ServerProcess) -> None:
    with client(server, new_key(server, "*", "--role", "reader")) as reader:
        for subscription in (_subscription(), _subscription()):
            listing = reader.get(
                f"/subscriptions/{subscription}/providers/Microsoft.Scheduler/jobCollections"
            )
            assert listing.status_code == 200, listing.text
    with client(server, new_key(server, "*")) as contributor:
        for subscription in (_subscription(), _subscription()):
            made = contributor.put(collection_path(subscription), json=COLLECTION_BODY)
            assert made.status_code == 201, made.text


# -- 403: roles ------------------------------------------------------------------------------------


def test_a_reader_key_reads_and_previews_but_cannot_write_delete_toggle_or_run(
    server: ServerProcess,
) -> None:
    subscription = _subscription()
    collection = collection_path(subscription)
    job = collection + "/jobs/j1"
    with client(server, server.token) as admin:
        assert admin.put(collection, json=COLLECTION_BODY).status_code == 201
        assert admin.put(job, json=JOB_BODY).status_code == 201
    with client(server, new_key(server, subscription, "--role", "reader")) as reader:
        for path in (
            collection,
            f"/subscriptions/{subscription}/providers/Microsoft.Scheduler/jobCollections",
            f"/subscriptions/{subscription}/resourceGroups/rg/providers/Microsoft.Scheduler"
            "/jobCollections",
            collection + "/jobs",
            job,
            job + "/history",
            job + "/upcoming",
        ):
            assert reader.get(path).status_code == 200, path
        preview = reader.post(job + "/upcoming", json=JOB_BODY)
        assert preview.status_code == 200, preview.text
        refused = [
            reader.put(collection, json=COLLECTION_BODY),
            reader.patch(collection, json={"tags": {"a": "b"}}),
            reader.post(collection + "/disable"),
            reader.post(collection + "/enable"),
            reader.put(collection + "/jobs/j2", json=JOB_BODY),
            reader.patch(job, json={"properties": {"state": "Disabled"}}),
            reader.post(job + "/run"),
            reader.delete(job),
            reader.delete(collection),
        ]
        for response in refused:
            assert "(role reader)" in _refusal(response, 403, "AuthorizationFailed")
    with client(server, server.token) as admin:
        assert admin.get(job).json()["properties"]["state"] == "enabled"  # nothing changed


def test_a_reader_key_cannot_create_a_job(server: ServerProcess) -> None:
    subscription = _subscription()
    with client(server, server.token) as admin:
        assert admin.put(collection_path(subscription), json=COLLECTION_BODY).status_code == 201
    with client(server, new_key(server, subscription, "--role", "reader")) as reader:
        response = reader.put(collection_path(subscription) + "/jobs/new", json=JOB_BODY)
    _refusal(response, 403, "AuthorizationFailed")
    with client(server, server.token) as admin:
        assert admin.get(collection_path(subscription) + "/jobs/new").status_code == 404


# -- audit and storage -----------------------------------------------------------------------------


def _audit_entries(server: ServerProcess) -> list[dict[str, object]]:
    entries = []
    for line in server.log().splitlines():
        if "horarium.audit" in line:
            entries.append(json.loads(line[line.index("{") :]))
    return entries


def test_every_write_leaves_one_audit_line_naming_the_key_and_never_the_token(
    server: ServerProcess,
) -> None:
    subscription = _subscription()
    name = f"auditor-{uuid.uuid4().hex[:6]}"
    token = new_key(server, subscription, "--name", name)
    collection = collection_path(subscription)
    with client(server, token) as http:
        http.put(collection, json=COLLECTION_BODY)
        http.put(collection + "/jobs/j1", json=JOB_BODY)
        http.get(collection + "/jobs/j1")  # a read: not audited
        http.post(collection + "/jobs/j1/upcoming", json=JOB_BODY)  # a preview: not audited
        http.post(collection + "/jobs/j1/run")
        http.delete(collection + "/jobs/j1")
        http.put(collection_path(_subscription()), json=COLLECTION_BODY)  # refused: 403
    with client(server, "hrm_wrong") as stranger:
        stranger.delete(collection)  # refused: 401
    mine = [e for e in _audit_entries(server) if e["principal"] == name]
    assert [(e["method"], str(e["path"]).rsplit("/", 1)[-1], e["status"]) for e in mine] == [
        ("PUT", "jc", 201),
        ("PUT", "j1", 201),
        ("POST", "run", 200),
        ("DELETE", "j1", 200),
        ("PUT", "jc", 403),
    ]
    unauthenticated = [e for e in _audit_entries(server) if e["path"] == collection]
    assert {"principal": "-", "method": "DELETE", "path": collection, "status": 401} in (
        unauthenticated
    )
    assert token not in server.log() and "hrm_wrong" not in server.log()


def test_the_database_holds_only_the_hash_of_each_token(server: ServerProcess) -> None:
    name = f"hashed-{uuid.uuid4().hex[:6]}"
    token = new_key(server, "Sub-Hashed", "--name", name, "--role", "reader")
    row = next(r for r in key_rows(server) if r["name"] == name)
    assert row["token_sha256"] == hashlib.sha256(token.encode()).hexdigest()
    assert (row["subscription"], row["role"], row["expires_at"]) == ("sub-hashed", "reader", None)
    for stored in key_rows(server):
        assert token not in {str(v) for v in stored.values()}
        assert server.token not in {str(v) for v in stored.values()}
