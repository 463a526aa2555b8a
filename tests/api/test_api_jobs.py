"""Jobs: create / replace / patch / get / list / delete / run, and the live wire format."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from tests.api.api_client import Api, error_of, http_job

STORAGE_JOB = {
    "properties": {
        "startTime": "2015-07-13T00:00:00Z",
        "action": {
            "type": "StorageQueue",
            "queueMessage": {
                "storageAccount": "schedulersdktest",
                "queueName": "queue1",
                "sasToken": "ThIsiSmYtOkeNdoyOusEe",
                "message": "some message!",
            },
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:01:00", "retryCount": 2},
            "errorAction": {
                "type": "Http",
                "request": {"uri": "http://www.bing.com/", "method": "GET"},
            },
        },
        "recurrence": {
            "frequency": "Week",
            "interval": 1,
            "count": 10000,
            "endTime": "2030-10-10T10:10:10Z",
        },
        "state": "Enabled",
    }
}


def _next_weekday_midnight(weekday: int, now: datetime) -> datetime:
    """The first midnight UTC at or after `now` falling on `weekday` (Monday = 0)."""
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if day < now:
        day += timedelta(days=1)
    while day.weekday() != weekday:
        day += timedelta(days=1)
    return day


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_create_is_201_with_the_live_service_body(api: Api) -> None:
    name = api.new_collection()
    before = datetime.now(UTC)
    response = api.put(api.job(name, "j14795"), STORAGE_JOB)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["id"] == f"{api.collection(name)}/jobs/j14795"
    assert body["type"] == "Microsoft.Scheduler/jobCollections/jobs"
    assert body["name"] == f"{name}/j14795"
    properties = body["properties"]
    status = properties.pop("status")
    assert properties == {
        "startTime": "2015-07-13T00:00:00Z",
        "action": {
            "queueMessage": {  # the sasToken is never returned
                "storageAccount": "schedulersdktest",
                "queueName": "queue1",
                "message": "some message!",
            },
            "type": "StorageQueue",
            "retryPolicy": {"retryType": "fixed", "retryInterval": "00:01:00", "retryCount": 2},
            "errorAction": {
                "request": {"uri": "http://www.bing.com/", "method": "GET"},
                "type": "Http",
            },
        },
        "recurrence": {
            "frequency": "week",
            "count": 10000,
            "endTime": "2030-10-10T10:10:10Z",
            "interval": 1,
        },
        "state": "enabled",
    }
    # Weekly from Monday 2015-07-13 00:00Z: the next Monday midnight.
    assert status == {
        "nextExecutionTime": _next_weekday_midnight(0, before).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "executionCount": 0,
        "failureCount": 0,
        "faultedCount": 0,
    }
    assert list(properties) == ["startTime", "action", "recurrence", "state"]
    assert list(json.loads(response.text)["properties"]["status"]) == [
        "nextExecutionTime",
        "executionCount",
        "failureCount",
        "faultedCount",
    ]
    assert api.get(api.job(name, "j14795")).json() == body | {
        "properties": properties | {"status": status}
    }


def test_put_replaces_the_whole_job_and_a_disabled_job_has_no_status(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "j12861")
    assert api.put(path, STORAGE_JOB).status_code == 201
    replaced = api.put(
        path,
        {
            "properties": {
                "startTime": "2015-07-13T00:00:00Z",
                "action": {
                    "type": "Http",
                    "request": {"uri": "http://www.bing.com/", "method": "GET"},
                },
                "state": "Disabled",
            }
        },
    )
    assert replaced.status_code == 200
    assert replaced.json()["properties"] == {
        "startTime": "2015-07-13T00:00:00Z",
        "action": {"request": {"uri": "http://www.bing.com/", "method": "GET"}, "type": "Http"},
        "state": "disabled",
    }


def test_patch_deep_merges_and_recomputes_the_next_execution(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "storage")
    api.put(path, STORAGE_JOB)
    before = datetime.now(UTC)
    patched = api.patch(
        path,
        {
            "properties": {
                "startTime": "2015-07-14T00:00:00Z",
                "recurrence": {"frequency": "Day", "interval": 1},
            }
        },
    )
    assert patched.status_code == 200, patched.text
    properties = patched.json()["properties"]
    assert properties["startTime"] == "2015-07-14T00:00:00Z"
    assert properties["recurrence"] == {
        "frequency": "day",
        "count": 10000,  # kept
        "endTime": "2030-10-10T10:10:10Z",  # kept
        "interval": 1,
    }
    assert properties["action"]["queueMessage"]["queueName"] == "queue1"  # kept
    assert properties["action"]["errorAction"]["type"] == "Http"
    after = datetime.now(UTC)

    def next_midnight(t: datetime) -> datetime:
        return (t + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)

    # The server evaluated the schedule between `before` and `after` (which straddle a
    # midnight only when the test runs across one).
    next_time = datetime.fromisoformat(properties["status"]["nextExecutionTime"])
    assert next_time in (next_midnight(before), next_midnight(after))
    # null removes a property; the secret kept from the stored job still works for the queue.
    removed = api.patch(
        path, {"properties": {"action": {"errorAction": None, "retryPolicy": None}}}
    )
    action = removed.json()["properties"]["action"]
    assert "errorAction" not in action and "retryPolicy" not in action
    assert action["queueMessage"] == {
        "storageAccount": "schedulersdktest",
        "queueName": "queue1",
        "message": "some message!",
    }


def test_disable_then_enable_by_patch(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "toggle")
    api.put(path, http_job(recurrence={"frequency": "Hour", "interval": 1}))
    disabled = api.patch(path, {"properties": {"state": "disabled"}}).json()["properties"]
    assert disabled["state"] == "disabled" and "status" not in disabled
    before = datetime.now(UTC)
    enabled = api.patch(path, {"properties": {"state": "ENABLED"}}).json()["properties"]
    assert enabled["state"] == "enabled"
    upcoming = _instant(enabled["status"]["nextExecutionTime"])
    assert before - timedelta(seconds=1) <= upcoming <= before + timedelta(hours=1, seconds=5)


def test_one_time_jobs_run_at_start_time_or_at_once(api: Api) -> None:
    name = api.new_collection()
    future = api.put(api.job(name, "future"), http_job(startTime="2031-02-03T04:05:06.789Z")).json()
    assert future["properties"]["status"]["nextExecutionTime"] == "2031-02-03T04:05:06.789Z"
    before = datetime.now(UTC)
    past = api.put(api.job(name, "past"), http_job(startTime="2015-07-13T00:00:00Z")).json()
    upcoming = _instant(past["properties"]["status"]["nextExecutionTime"])
    assert before - timedelta(seconds=1) <= upcoming <= datetime.now(UTC)


def test_a_finished_series_is_completed_and_its_state_cannot_change(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "ended")
    created = api.put(
        path, http_job(recurrence={"frequency": "Day", "endTime": "2016-01-01T00:00:00Z"})
    ).json()["properties"]
    assert created["state"] == "completed"
    assert "nextExecutionTime" not in created["status"]
    for state in ("Enabled", "Disabled"):
        refused = api.patch(path, {"properties": {"state": state}})
        assert refused.status_code == 409, refused.text
        assert "Completed" in error_of(refused)["message"]
    refused = api.put(path, http_job())
    assert refused.status_code == 409
    # Other changes are still accepted, and DELETE works.
    renamed = api.patch(path, {"properties": {"action": {"request": {"method": "POST"}}}})
    assert renamed.status_code == 200
    assert renamed.json()["properties"]["state"] == "completed"
    assert api.delete(path).status_code == 200
    assert api.get(path).status_code == 404


def test_only_enabled_and_disabled_can_be_set(api: Api) -> None:
    name = api.new_collection()
    for state in ("Completed", "Faulted"):
        response = api.put(api.job(name, "x"), http_job(state=state))
        assert response.status_code == 400
        assert "properties.state" in error_of(response)["message"]


def _pfx(password: bytes) -> tuple[str, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Contoso"),
            x509.NameAttribute(NameOID.COMMON_NAME, "scheduler.contoso.test"),
        ]
    )
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC))
        .sign(key, hashes.SHA256())
    )
    blob = pkcs12.serialize_key_and_certificates(
        b"client", key, cert, None, serialization.BestAvailableEncryption(password)
    )
    return base64.b64encode(blob).decode(), cert


def test_secrets_are_never_returned_and_certificates_are_described(api: Api) -> None:
    name = api.new_collection()
    pfx, cert = _pfx(b"pfx-password-1")
    secrets = [
        "basic-password-1",
        "pfx-password-1",
        pfx,
        "oauth-secret-1",
        "sas-token-1",
        "sas-key-1",
    ]

    def job(auth: dict[str, Any]) -> dict[str, Any]:
        return {
            "properties": {
                "action": {
                    "type": "Https",
                    "request": {
                        "uri": "https://127.0.0.1:9/",
                        "method": "POST",
                        "authentication": auth,
                    },
                    "errorAction": {
                        "type": "ServiceBusQueue",
                        "serviceBusQueueMessage": {
                            "namespace": "contoso",
                            "queueName": "q1",
                            "message": "m",
                            "transportType": "netMessaging",
                            "authentication": {
                                "type": "SharedAccessKey",
                                "sasKeyName": "k",
                                "sasKey": "sas-key-1",
                            },
                        },
                    },
                }
            }
        }

    bodies = {
        "basic": job({"type": "Basic", "username": "user", "password": "basic-password-1"}),
        "cert": job({"type": "ClientCertificate", "pfx": pfx, "password": "pfx-password-1"}),
        "oauth": job(
            {
                "type": "ActiveDirectoryOAuth",
                "tenant": "t.onmicrosoft.com",
                "audience": "https://a/",
                "clientId": "cid",
                "secret": "oauth-secret-1",
            }
        ),
        "queue": {
            "properties": {
                "action": {
                    "type": "StorageQueue",
                    "queueMessage": {
                        "storageAccount": "acct1",
                        "queueName": "q-1",
                        "sasToken": "sas-token-1",
                        "message": "m",
                    },
                }
            }
        },
    }
    texts = []
    for job_name, body in bodies.items():
        response = api.put(api.job(name, job_name), body)
        assert response.status_code == 201, response.text
        texts.append(response.text)
        texts.append(api.get(api.job(name, job_name)).text)
    texts.append(api.get(api.collection(name) + "/jobs").text)
    for text in texts:
        for secret in secrets:
            assert secret not in text
    basic = api.get(api.job(name, "basic")).json()["properties"]["action"]
    assert basic["request"]["authentication"] == {"username": "user", "type": "Basic"}
    assert basic["errorAction"]["serviceBusQueueMessage"]["authentication"] == {
        "sasKeyName": "k",
        "type": "sharedAccessKey",
    }
    assert basic["errorAction"]["serviceBusQueueMessage"]["transportType"] == "netMessaging"
    oauth = api.get(api.job(name, "oauth")).json()["properties"]["action"]["request"]
    assert oauth["authentication"] == {
        "tenant": "t.onmicrosoft.com",
        "audience": "https://a/",
        "clientId": "cid",
        "type": "ActiveDirectoryOAuth",
    }
    described = api.get(api.job(name, "cert")).json()["properties"]["action"]["request"]
    assert described["authentication"] == {
        "certificateThumbprint": cert.fingerprint(hashes.SHA1()).hex().upper(),
        "certificateExpiration": "2031-05-06T07:08:09Z",
        "certificateExpirationDate": "2031-05-06T07:08:09Z",
        "certificateSubjectName": "CN=scheduler.contoso.test, O=Contoso, C=US",
        "type": "ClientCertificate",
    }
    # A PATCH that leaves the authentication alone keeps the stored secrets.
    kept = api.patch(api.job(name, "cert"), {"properties": {"action": {"request": {"body": "x"}}}})
    assert kept.status_code == 200, kept.text
    # Sending authentication null removes it.
    removed = api.patch(
        api.job(name, "cert"), {"properties": {"action": {"request": {"authentication": None}}}}
    )
    assert "authentication" not in removed.json()["properties"]["action"]["request"]


def test_names_and_enums_are_read_case_insensitively(api: Api) -> None:
    name = api.new_collection()
    body = {
        "PROPERTIES": {
            "StartTime": "2015-07-13T00:00:00Z",
            "Action": {
                "TYPE": "https",
                "Request": {
                    "URI": "https://127.0.0.1:9/",
                    "Method": "GET",
                    "Headers": {"X-Custom": "1"},
                },
                "RetryPolicy": {"RetryType": "FIXED", "RetryInterval": "PT30S", "RetryCount": 3},
            },
            "Recurrence": {
                "Frequency": "MONTH",
                "Interval": 1,
                "Schedule": {
                    "Hours": [5],
                    "Minutes": [0],
                    "MonthlyOccurrences": [
                        {"Day": "FRIDAY", "occurrence": 1},
                        {"day": "monday", "Occurrence": -1},
                    ],
                },
            },
            "State": "ENABLED",
        }
    }
    response = api.put(api.job(name, "cased"), body)
    assert response.status_code == 201, response.text
    properties = response.json()["properties"]
    assert properties["action"] == {
        "request": {"uri": "https://127.0.0.1:9/", "method": "GET", "headers": {"X-Custom": "1"}},
        "type": "Https",
        "retryPolicy": {"retryType": "fixed", "retryInterval": "00:00:30", "retryCount": 3},
    }
    assert properties["recurrence"] == {
        "frequency": "month",
        "interval": 1,
        "schedule": {
            "minutes": [0],
            "hours": [5],
            # "occurrence" as the live service wrote it, "Occurrence" as the spec (and the Python
            # SDK) reads it.
            "monthlyOccurrences": [
                {"day": "friday", "occurrence": 1, "Occurrence": 1},
                {"day": "monday", "occurrence": -1, "Occurrence": -1},
            ],
        },
    }
    assert properties["state"] == "enabled"
    # The first Friday of a month (or last Monday), at 05:00 UTC.
    upcoming = _instant(properties["status"]["nextExecutionTime"])
    assert (upcoming.hour, upcoming.minute) == (5, 0)
    assert (upcoming.weekday() == 4 and upcoming.day <= 7) or upcoming.weekday() == 0


def test_durations_are_written_as_timespans(api: Api) -> None:
    name = api.new_collection()
    cases = {
        "PT30S": "00:00:30",
        "00:01:00": "00:01:00",
        "30.00:00:00": "30.00:00:00",
        "P1DT2H": "1.02:00:00",
    }
    for i, (given, shown) in enumerate(cases.items()):
        body = http_job()
        body["properties"]["action"]["retryPolicy"] = {"retryType": "Fixed", "retryInterval": given}
        response = api.put(api.job(name, f"d{i}"), body)
        assert response.status_code == 201, response.text
        assert response.json()["properties"]["action"]["retryPolicy"]["retryInterval"] == shown
    topic = {
        "properties": {
            "action": {
                "type": "ServiceBusTopic",
                "serviceBusTopicMessage": {
                    "namespace": "contoso",
                    "topicPath": "orders/high",
                    "message": "m",
                    "authentication": {"type": "sharedaccesskey", "sasKeyName": "k", "sasKey": "s"},
                    "brokeredMessageProperties": {"timeToLive": "PT1H", "forcePersistence": True},
                    "customMessageProperties": {"a": "b"},
                    "transportType": "AMQP",
                },
            }
        }
    }
    response = api.put(api.job(name, "topic"), topic)
    assert response.status_code == 201, response.text
    message = response.json()["properties"]["action"]["serviceBusTopicMessage"]
    assert message["brokeredMessageProperties"] == {
        "forcePersistence": True,
        "timeToLive": "01:00:00",
    }
    assert message["transportType"] == "amqp"
    assert message["customMessageProperties"] == {"a": "b"}


def test_list_filters_by_state_and_pages_with_next_link(api: Api) -> None:
    name = api.new_collection()
    for i in range(5):
        api.put(api.job(name, f"job{i}"), http_job(state="Disabled" if i in (1, 3) else "Enabled"))
    everything = api.get(api.collection(name) + "/jobs").json()
    assert [j["name"] for j in everything["value"]] == [f"{name}/job{i}" for i in range(5)]
    assert everything["nextLink"] is None
    for text in ("state eq Enabled", "state eq 'Enabled'", "State EQ enabled"):
        enabled = api.get(api.collection(name) + "/jobs", params={"$filter": text}).json()
        assert [j["name"].split("/")[1] for j in enabled["value"]] == ["job0", "job2", "job4"]
    seen: list[str] = []
    page = api.get(api.collection(name) + "/jobs", params={"$top": 2}).json()
    pages = 1
    while True:
        seen += [j["name"].split("/")[1] for j in page["value"]]
        assert len(page["value"]) <= 2
        if page["nextLink"] is None:
            break
        assert page["nextLink"].startswith(api.server.base_url)
        page = api.http.get(page["nextLink"]).json()
        pages += 1
    assert seen == [f"job{i}" for i in range(5)] and pages == 3
    skipped = api.get(api.collection(name) + "/jobs", params={"$top": 2, "$skip": 4}).json()
    assert [j["name"].split("/")[1] for j in skipped["value"]] == ["job4"]
    assert skipped["nextLink"] is None
    for params in ({"$top": 0}, {"$top": 101}, {"$top": "x"}, {"$skip": -1}, {"$skip": 10**20}):
        response = api.get(api.collection(name) + "/jobs", params=params)
        assert response.status_code == 400, params
        assert next(iter(params)) in error_of(response)["message"]
    for text in ("status eq Enabled", "state eq Paused", "state ne Enabled"):
        response = api.get(api.collection(name) + "/jobs", params={"$filter": text})
        assert response.status_code == 400 and "$filter" in error_of(response)["message"]


def test_run_and_delete(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "runme")
    api.put(path, http_job(startTime="2099-01-01T00:00:00Z"))
    ran = api.post(path + "/run")
    assert ran.status_code == 200 and ran.content == b""
    assert api.post(api.job(name, "missing") + "/run").status_code == 404
    deleted = api.delete(path)
    assert deleted.status_code == 200 and deleted.content == b""
    assert api.delete(path).status_code == 404
    assert api.get(path).status_code == 404


def test_a_job_of_a_suspended_or_disabled_collection_cannot_be_run_now(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "held")
    api.put(path, http_job(startTime="2099-01-01T00:00:00Z"))
    for state in ("Suspended", "Disabled"):
        api.patch(api.collection(name), {"properties": {"state": state}})
        refused = api.post(path + "/run")
        assert refused.status_code == 409, refused.text
        error = error_of(refused)
        assert error["code"] == "JobCollectionStateConflict"
        assert state in error["message"] and "enable" in error["message"]
    assert api.post(api.collection(name) + "/enable").status_code == 200
    assert api.post(path + "/run").status_code == 200


def test_the_2016_01_01_api_version_is_accepted_too(api: Api) -> None:
    name = api.new_collection()
    body = http_job()
    body["properties"]["action"]["request"]["authentication"] = {"username": "u", "password": "p"}
    response = api.put(api.job(name, "old"), body, version="2016-01-01")
    assert response.status_code == 201, response.text
    # No discriminator in 2016-01-01: the kind is told from the fields.
    assert response.json()["properties"]["action"]["request"]["authentication"] == {
        "username": "u",
        "type": "Basic",
    }
    premium = {"location": "West US", "properties": {"sku": {"name": "Premium"}}}
    response = api.put(api.collection(name + "p"), premium, version="2016-01-01")
    assert response.json()["properties"]["sku"] == {"name": "P10Premium"}
    bad = api.get(api.job(name, "old"), version="2014-08-01-preview")
    assert bad.status_code == 400 and error_of(bad)["code"] == "InvalidApiVersionParameter"
    missing = api.get(api.job(name, "old"), version=None)
    assert missing.status_code == 400 and error_of(missing)["code"] == "MissingApiVersionParameter"
