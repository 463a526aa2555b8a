"""Which secrets a job takes, as export and import see them (the API never returns them: it
leaves them out, or shows `***`)."""

from __future__ import annotations

from typing import Any

from horarium.client.secret_fields import (
    as_answered,
    collection_as_answered,
    collection_secret_fields,
    secret_fields,
)


def _job(action: dict[str, Any]) -> dict[str, Any]:
    return {"properties": {"action": action}}


def _http(**request: Any) -> dict[str, Any]:
    return _job({"type": "Http", "request": {"uri": "http://h/", "method": "GET", **request}})


def _fields(job: dict[str, Any]) -> list[tuple[str, bool, bool]]:
    return [(f.path, f.required, f.present) for f in secret_fields(job)]


REQUEST = "properties.action.request"


def test_each_authentication_names_its_secrets() -> None:
    auth = f"{REQUEST}.authentication"
    basic = _http(authentication={"type": "Basic", "username": "u"})
    assert _fields(basic) == [(f"{auth}.password", True, False)]
    oauth = _http(authentication={"type": "ActiveDirectoryOAuth", "tenant": "t"})
    assert _fields(oauth) == [(f"{auth}.secret", True, False)]
    certificate = _http(authentication={"type": "ClientCertificate", "pfx": "MII…"})
    assert _fields(certificate) == [(f"{auth}.pfx", True, True), (f"{auth}.password", False, False)]
    assert _fields(_http(authentication={"type": "NotSpecified"})) == []
    spelled = _http(authentication={"TYPE": "basic", "Password": "p"})
    assert _fields(spelled) == [(f"{auth}.password", True, True)]


def test_credential_headers_and_uri_secrets_shown_masked_are_missing() -> None:
    masked = _http(uri="https://h/hook?code=***&v=1", headers={"Authorization": "***", "x": "1"})
    assert _fields(masked) == [
        (f"{REQUEST}.headers.Authorization", True, False),
        (f"{REQUEST}.uri", True, False),
    ]
    given = _http(uri="https://h/hook?code=abc&v=1", headers={"Authorization": "Bearer t"})
    assert _fields(given) == [
        (f"{REQUEST}.headers.Authorization", True, True),
        (f"{REQUEST}.uri", True, True),
    ]
    assert _fields(_http(uri="https://h/hook?v=1", headers={"Accept": "*/*"})) == []


def test_queue_messages_and_the_error_action_name_theirs() -> None:
    job = _job(
        {
            "type": "StorageQueue",
            "queueMessage": {"storageAccount": "a", "queueName": "q", "message": "m"},
            "errorAction": {
                "type": "ServiceBusTopic",
                "serviceBusTopicMessage": {
                    "namespace": "n",
                    "topicPath": "t",
                    "authentication": {"type": "sharedAccessKey", "sasKeyName": "k"},
                },
            },
        }
    )
    assert _fields(job) == [
        ("properties.action.queueMessage.sasToken", True, False),
        (
            "properties.action.errorAction.serviceBusTopicMessage.authentication.sasKey",
            True,
            False,
        ),
    ]


def test_as_answered_is_what_the_api_would_show() -> None:
    job = _http(
        uri="https://user:pw@h/hook?sig=abc&v=1",
        headers={"Authorization": "Bearer t", "Accept": "*/*"},
        authentication={"type": "Basic", "username": "u", "password": "p"},
    )
    shown = as_answered(job)["properties"]["action"]["request"]
    assert shown == {
        "uri": "https://user:***@h/hook?sig=***&v=1",
        "method": "GET",
        "headers": {"Authorization": "***", "Accept": "*/*"},
        "authentication": {"type": "Basic", "username": "u"},
    }
    assert job["properties"]["action"]["request"]["authentication"]["password"] == "p"  # a copy


def test_a_collections_notifications_name_their_secrets() -> None:
    def notification(**secret: Any) -> dict[str, Any]:
        return {"events": ["JobFaulted"], "uri": "https://h/hook", **secret}

    collection = {
        "properties": {
            "sku": {"name": "Standard"},
            "Notifications": [notification(), notification(secret="***"), notification(Secret="s")],
        }
    }
    fields = [(f.path, f.required, f.present) for f in collection_secret_fields(collection)]
    assert fields == [
        ("properties.notifications[0].secret", True, False),
        ("properties.notifications[1].secret", True, False),
        ("properties.notifications[2].secret", True, True),
    ]
    shown = collection_as_answered(collection)
    assert shown["properties"]["Notifications"] == [notification()] * 3
    assert collection["properties"]["Notifications"][2] == notification(Secret="s")
    assert collection_secret_fields({"properties": {"sku": {"name": "Free"}}}) == []


def test_each_channel_names_its_own_secret() -> None:
    """A slack or teams uri is the secret (not carried when shown masked), a pagerduty channel's
    routingKey; an email channel has none (docs/engine.md, "Channels")."""
    listed = [
        {"format": "slack", "events": ["JobFaulted"], "uri": "https://hooks.example/T/B/x"},
        {"format": "Teams", "events": ["JobFaulted"], "uri": "https://teams.example/***"},
        {"format": "pagerduty", "events": ["JobFaulted"], "routingKey": "k"},
        {"events": ["JobFaulted"], "email": {"to": ["ops@example.com"]}},
    ]
    collection = {"properties": {"sku": {"name": "Standard"}, "notifications": listed}}
    fields = [(f.path, f.present) for f in collection_secret_fields(collection)]
    assert fields == [
        ("properties.notifications[0].uri", True),
        ("properties.notifications[1].uri", False),
        ("properties.notifications[2].routingKey", True),
    ]
    shown = collection_as_answered(collection)["properties"]["notifications"]
    assert shown[0]["uri"] == "https://hooks.example/***" and "routingKey" not in shown[2]
    assert shown[3] == listed[3] and listed[0]["uri"].endswith("/x")  # the input untouched
