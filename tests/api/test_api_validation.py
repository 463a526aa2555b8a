"""Bad input gets a 400 ARM error naming the field and the rule; nothing produces a 5xx."""

# ruff: noqa: E501  (the table of cases reads best one case per line)

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.api.api_client import Api, error_of, http_job

SERVICE_BUS_QUEUE = {
    "type": "ServiceBusQueue",
    "serviceBusQueueMessage": {
        "namespace": "contoso",
        "queueName": "orders",
        "message": "m",
        "authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "s"},
    },
}


def _with(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """`base` (an HTTP job) with the value at a dotted path under properties set (None: removed)."""
    body = copy.deepcopy(base or http_job())
    node = body["properties"]
    *parents, last = path.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value
    return body


def _queue_job(**message: Any) -> dict[str, Any]:
    queue = {"storageAccount": "acct1", "queueName": "orders", "sasToken": "s", "message": "m"}
    queue.update(message)
    return {"properties": {"action": {"type": "StorageQueue", "queueMessage": {k: v for k, v in queue.items() if v is not None}}}}  # fmt: skip


def _bus_job(kind: str = "ServiceBusQueue", **message: Any) -> dict[str, Any]:
    action = copy.deepcopy(SERVICE_BUS_QUEUE)
    payload = action.pop("serviceBusQueueMessage")
    payload.update(message)
    payload = {k: v for k, v in payload.items() if v is not None}
    action["type"] = kind
    key = "serviceBusTopicMessage" if kind == "ServiceBusTopic" else "serviceBusQueueMessage"
    action[key] = payload
    return {"properties": {"action": action}}


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("no properties", {"name": "x"}, "properties: required"),
    ("no action", {"properties": {"startTime": "2020-01-01T00:00:00Z"}}, "properties.action: required"),
    ("action not an object", _with("action", "Http"), "properties.action: must be a JSON object"),
    ("unknown action type", _with("action.type", "Ftp"), "properties.action.type: 'Ftp' is not one of"),
    ("no action type", _with("action.type", None), "properties.action.type: required"),
    ("no request", _with("action.request", None), "properties.action.request: required"),
    ("no uri", _with("action.request.uri", None), "properties.action.request.uri: required"),
    ("relative uri", _with("action.request.uri", "/x"), "properties.action.request.uri: must be an absolute"),
    ("uri too long", _with("action.request.uri", "http://h/" + "a" * 2040), "at most 2048 characters"),
    ("uri not a string", _with("action.request.uri", 5), "properties.action.request.uri: must be a string"),
    ("bad method", _with("action.request.method", "GE T"), "properties.action.request.method"),
    ("body too long", _with("action.request.body", "b" * 8193), "properties.action.request.body: at most 8192"),
    ("body not a string", _with("action.request.body", {"a": 1}), "properties.action.request.body: must be a string"),
    ("51 headers", _with("action.request.headers", {f"h{i}": "v" for i in range(51)}), "at most 50 headers"),
    ("header value with a line break", _with("action.request.headers", {"a": "x\r\ny: z"}), "headers.a"),
    ("header value not a string", _with("action.request.headers", {"a": 1}), "headers.a: must be a string"),
    ("headers too big", _with("action.request.headers", {"a": "x" * 4100}), "at most 4096 characters"),
    (
        "basic without password",
        _with("action.request.authentication", {"type": "Basic", "username": "u"}),
        "'Username' and 'Password' are required for 'Basic' type of Authentication.",
    ),
    (
        "unknown authentication type",
        _with("action.request.authentication", {"type": "Kerberos"}),
        "properties.action.request.authentication.type",
    ),
    (
        "oauth without secret",
        _with("action.request.authentication", {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c"}),
        "properties.action.request.authentication.secret",
    ),
    (
        "pfx not base64",
        _with("action.request.authentication", {"type": "ClientCertificate", "pfx": "!!!", "password": "p"}),
        "properties.action.request.authentication.pfx: must be the base64 text",
    ),
    (
        "pfx not a pfx",
        _with("action.request.authentication", {"type": "ClientCertificate", "pfx": "aGVsbG8=", "password": "p"}),
        "properties.action.request.authentication.pfx: could not be opened",
    ),
    ("retry type", _with("action.retryPolicy", {"retryType": "Linear"}), "properties.action.retryPolicy.retryType: 'Linear' is not one of None, Fixed, Exponential"),
    ("max retry interval without exponential", _with("action.retryPolicy", {"retryType": "Fixed", "maxRetryInterval": "PT5M"}), "properties.action.retryPolicy.maxRetryInterval: only with retryType Exponential"),
    ("max retry interval without a retry type", _with("action.retryPolicy", {"maxRetryInterval": "PT5M"}), "properties.action.retryPolicy.maxRetryInterval: only with retryType Exponential"),
    ("max retry interval text", _with("action.retryPolicy", {"retryType": "Exponential", "maxRetryInterval": "later"}), "properties.action.retryPolicy.maxRetryInterval: 'later' is neither a TimeSpan"),
    ("max retry interval too long", _with("action.retryPolicy", {"retryType": "Exponential", "maxRetryInterval": "P600D"}), "properties.action.retryPolicy.maxRetryInterval: 'P600D' is not between 15 seconds"),
    ("max retry interval below the interval", _with("action.retryPolicy", {"retryType": "Exponential", "retryInterval": "PT2M", "maxRetryInterval": "PT1M"}), "properties.action.retryPolicy.maxRetryInterval: 'PT1M' is shorter than the retryInterval (00:02:00)"),
    ("max retry interval below the default interval", _with("action.retryPolicy", {"retryType": "Exponential", "maxRetryInterval": "00:00:20"}), "is shorter than the retryInterval (00:00:30)"),
    ("error action max retry interval", _with("action.errorAction", {"type": "Http", "request": {"uri": "http://h/", "method": "GET"}, "retryPolicy": {"retryType": "None", "maxRetryInterval": "PT1M"}}), "properties.action.errorAction.retryPolicy.maxRetryInterval: only with"),
    ("templated not a boolean", _with("action.templated", "yes"), "properties.action.templated: must be true or false"),
    ("unknown placeholder in the uri", _with("action.templated", True, _with("action.request.uri", "http://h/{{jobname}}")), "properties.action.request.uri: unknown placeholder {{jobname}}; a templated action may use {{scheduledTime}}, {{executionTime}}, {{executionTag}}, {{attempt}}, {{jobName}}, {{collectionName}}"),
    ("unknown placeholder in the body", _with("action.templated", True, _with("action.request.body", '{"at": "{{ now }}"}')), "properties.action.request.body: unknown placeholder {{ now }}"),
    ("unknown placeholder in a header", _with("action.templated", True, _with("action.request.headers", {"X-Run": "{{run}}"})), "properties.action.request.headers.X-Run: unknown placeholder {{run}}"),
    ("unknown placeholder in a queue message", {"properties": {"action": {**_queue_job(message="{{tag}}")["properties"]["action"], "templated": True}}}, "properties.action.queueMessage.message: unknown placeholder {{tag}}"),
    ("unknown placeholder in a bus message", {"properties": {"action": {**_bus_job(message="{{}}")["properties"]["action"], "templated": True}}}, "properties.action.serviceBusQueueMessage.message: unknown placeholder {{}}"),
    ("unknown placeholder in the error action", _with("action.templated", True, _with("action.errorAction", {"type": "Http", "request": {"uri": "http://h/", "method": "POST", "body": "{{executionTag}} {{Attempt}}"}})), "properties.action.errorAction.request.body: unknown placeholder {{Attempt}}"),
    ("templated on the error action", _with("action.errorAction", {"type": "Http", "request": {"uri": "http://h/", "method": "GET"}, "templated": True}), "properties.action.errorAction.templated: set it on the action; it covers the error action too"),
    ("retry interval text", _with("action.retryPolicy", {"retryInterval": "soon"}), "properties.action.retryPolicy.retryInterval"),
    ("retry interval too short", _with("action.retryPolicy", {"retryInterval": "00:00:05"}), "between 15 seconds"),
    ("retry interval months", _with("action.retryPolicy", {"retryInterval": "P1M"}), "months and years"),
    ("retry count", _with("action.retryPolicy", {"retryCount": 21}), "properties.action.retryPolicy.retryCount: 21 is more than 20"),
    ("retry count type", _with("action.retryPolicy", {"retryCount": True}), "retryCount: must be an integer"),
    (
        "nested error action",
        _with("action.errorAction", {"type": "Http", "request": {"uri": "http://h/", "method": "GET"}, "errorAction": {"type": "Http"}}),
        "properties.action.errorAction.errorAction",
    ),
    ("error action invalid", _with("action.errorAction", {"type": "Http"}), "properties.action.errorAction.request: required"),
    ("state unknown", _with("state", "Paused"), "properties.state: 'Paused' is not one of"),
    ("start time", _with("startTime", "yesterday"), "properties.startTime"),
    ("start time type", _with("startTime", 20200101), "properties.startTime"),
    ("recurrence frequency", _with("recurrence", {"frequency": "Fortnight"}), "properties.recurrence.frequency"),
    ("recurrence missing frequency", _with("recurrence", {"interval": 2}), "properties.recurrence.frequency"),
    ("recurrence interval", _with("recurrence", {"frequency": "Minute", "interval": 0}), "properties.recurrence.interval"),
    ("recurrence unknown field", _with("recurrence", {"frequency": "Day", "every": 2}), "properties.recurrence.every"),
    (
        "schedule minute",
        _with("recurrence", {"frequency": "Day", "schedule": {"minutes": [0, 61]}}),
        "properties.recurrence.schedule.minutes[1]: 61 is not in 0..59",
    ),
    (
        "schedule weekday",
        _with("recurrence", {"frequency": "Week", "schedule": {"weekDays": ["Funday"]}}),
        "properties.recurrence.schedule.weekDays[0]",
    ),
    ("end time", _with("recurrence", {"frequency": "Day", "endTime": "2017-13-40"}), "properties.recurrence.endTime"),
    ("time zone", _with("recurrence", {"frequency": "Day", "timeZone": "Mars/Base"}), "properties.recurrence.timeZone"),
    (
        "storage account",
        _queue_job(storageAccount="Bad_Account"),
        "A valid value for StorageAccount required for Storage Queue action job."
        " (properties.action.queueMessage.storageAccount",
    ),
    (
        "storage queue name",
        _queue_job(queueName="Orders!"),
        "A valid value for QueueName required for Storage Queue action job."
        " (properties.action.queueMessage.queueName",
    ),
    ("storage sas token", _queue_job(sasToken=None), "A valid value for SasToken required"),
    ("storage message", _queue_job(message=None), "A valid value for Message required"),
    ("storage payload", {"properties": {"action": {"type": "StorageQueue"}}}, "properties.action.queueMessage"),
    (
        "service bus queue name",
        _bus_job(queueName=None),
        "A valid value for QueueName required for ServiceBus Queue action job."
        " (properties.action.serviceBusQueueMessage.queueName",
    ),
    (
        "service bus topic path",
        _bus_job("ServiceBusTopic"),
        "A valid value for TopicPath required for ServiceBus Topic action job."
        " (properties.action.serviceBusTopicMessage.topicPath",
    ),
    ("service bus namespace", _bus_job(namespace="bad ns"), "A valid value for Namespace required"),
    ("service bus authentication", _bus_job(authentication=None), "A valid value for Authentication required"),
    (
        "service bus authentication type",
        _bus_job(authentication={"type": "NotSpecified", "sasKeyName": "k", "sasKey": "s"}),
        "properties.action.serviceBusQueueMessage.authentication.type",
    ),
    ("service bus key name", _bus_job(authentication={"type": "SharedAccessKey", "sasKey": "s"}), "A valid value for SasKeyName required"),
    ("service bus key", _bus_job(authentication={"type": "SharedAccessKey", "sasKeyName": "k"}), "A valid value for SasKey required"),
    ("transport type", _bus_job(transportType="Pigeon"), "properties.action.serviceBusQueueMessage.transportType"),
    (
        "brokered properties",
        _bus_job(brokeredMessageProperties={"timeToLive": "forever"}),
        "properties.action.serviceBusQueueMessage.brokeredMessageProperties.timeToLive",
    ),
    (
        "brokered persistence",
        _bus_job(brokeredMessageProperties={"forcePersistence": "yes"}),
        "brokeredMessageProperties.forcePersistence: must be true or false",
    ),
    ("custom properties", _bus_job(customMessageProperties={"a": 1}), "customMessageProperties.a: must be a string"),
    (
        "job over 16 KB",
        _with(
            "action.errorAction",
            {"type": "Http", "request": {"uri": "http://h/", "method": "POST", "body": "e" * 8000}},
            _with("action.request.body", "b" * 8000, _with("action.request.headers", {"h": "x" * 3000})),
        ),
        "a job may be at most 16384 (16 KB)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("case", "body", "message"), CASES, ids=[c[0] for c in CASES])
def test_invalid_job_is_400_naming_the_field(api: Api, case: str, body: Any, message: str) -> None:
    name = api.new_collection()
    response = api.put(api.job(name, "j1"), body)
    assert response.status_code == 400, (case, response.text)
    assert message in error_of(response)["message"], response.text
    assert api.get(api.job(name, "j1")).status_code == 404  # nothing was stored


def test_malformed_bodies(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "j1")
    for content, expected in (
        (b"{", "not valid JSON"),
        (b"", "request body is required"),
        (b'{"properties": NaN}', "NaN is not a JSON value"),
        (b"[1]", "must be a JSON object"),
        (b"\xff\xfe", "not UTF-8"),
        (b'{"properties": ' * 5000, "not valid JSON"),
    ):
        response = api.request("PUT", path, content=content)
        assert response.status_code == 400, (content[:20], response.text)
        assert expected in error_of(response)["message"]
    huge = b'{"properties": {"x": "' + b"a" * (2 * 1024 * 1024) + b'"}}'
    response = api.request("PUT", path, content=huge)
    assert response.status_code == 413 and error_of(response)["code"] == "RequestEntityTooLarge"


def test_patch_is_validated_like_put(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "j1")
    api.put(path, http_job())
    response = api.patch(path, {"properties": {"action": {"request": {"uri": "ftp://x"}}}})
    assert response.status_code == 400
    assert "properties.action.request.uri" in error_of(response)["message"]
    response = api.patch(
        path, {"properties": {"recurrence": {"frequency": "Minute", "interval": 5000}}}
    )
    assert response.status_code == 400
    assert "properties.recurrence.interval" in error_of(response)["message"]
    assert (
        api.get(path).json()["properties"]["action"]["request"]["uri"] == "http://127.0.0.1:9/hook"
    )


def test_unknown_routes_and_methods_are_arm_errors(api: Api) -> None:
    for method, path in (
        ("GET", "/nothing"),
        ("GET", f"/subscriptions/{api.subscription}/resourceGroups/rg/providers/Microsoft.Other/x"),
        ("GET", api.collection("c") + "/jobs/j/history/extra/more"),
    ):
        response = api.request(method, path)
        assert response.status_code == 404, path
        assert error_of(response)["code"] == "NotFound"
    response = api.request("POST", api.collection("c"))
    assert response.status_code == 405
    assert error_of(response)["code"] == "MethodNotAllowed"


def test_deeply_nested_bodies_are_refused(api: Api) -> None:
    name = api.new_collection()
    api.put(api.job(name, "j1"), http_job())
    deep: Any = "x"
    for _ in range(900):
        deep = {"a": deep}
    response = api.patch(api.job(name, "j1"), {"properties": {"action": {"extra": deep}}})
    assert response.status_code == 400
    assert "nested more than" in error_of(response)["message"]


def test_nul_characters_are_refused(api: Api) -> None:
    """No stored value holds a NUL (PostgreSQL text cannot): a body or tag with one is 400."""
    name = api.new_collection()
    body = http_job()
    body["properties"]["action"]["request"]["body"] = "a\u0000b"
    response = api.put(api.job(name, "nul"), body)
    assert response.status_code == 400, response.text
    assert "properties.action.request.body: contains a NUL" in error_of(response)["message"]
    assert api.get(api.job(name, "nul")).status_code == 404
    tags = api.patch(api.collection(name), {"tags": {"k\u0000": "v\u0000"}})
    assert tags.status_code == 400 and "tags.k\\u0000" in error_of(tags)["message"]
    response = api.put(api.job(name, "nul%00"), http_job())
    assert response.status_code == 400 and "jobName" in error_of(response)["message"]
