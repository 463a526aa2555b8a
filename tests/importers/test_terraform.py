"""`horarium.importers.terraform`: `terraform show -json` documents read into PUT bodies, as the
azurerm provider 1.x built its requests (pure: files in, documents out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from horarium.importers.documents import Document, SourceError
from horarium.importers.terraform import read_terraform

JOB = "azurerm_scheduler_job"


def job_values(**values: Any) -> dict[str, Any]:
    return {
        "name": "j",
        "resource_group_name": "rg",
        "job_collection_name": "jc",
        "action_web": [{"url": "https://example.com/x", "method": "get"}],
        **values,
    }


def show(*resources: dict[str, Any], plan: dict[str, Any] | None = None) -> dict[str, Any]:
    module = {"root_module": {"resources": list(resources)}}
    if plan is not None:
        return {"planned_values": module, **plan}
    return {"format_version": "1.0", "values": module}


def tf(kind: str, values: dict[str, Any], name: str = "a", mode: str = "managed") -> dict[str, Any]:
    return {"address": f"{kind}.{name}", "mode": mode, "type": kind, "values": values}


def read(
    tmp_path: Path, document: dict[str, Any], sets: dict[str, str] | None = None
) -> list[Document]:
    path = tmp_path / "show.json"
    path.write_text(json.dumps(document))
    return read_terraform(path, sets or {}, None).documents


def one_job(tmp_path: Path, **values: Any) -> dict[str, Any]:
    (found,) = read(tmp_path, show(tf(JOB, job_values(**values))))
    assert found.kind == "job" and found.names == ("jc", "j")
    return found.body["properties"]  # type: ignore[no-any-return]


def test_a_web_action_is_https_by_its_url_with_the_method_upper_cased(tmp_path: Path) -> None:
    action = one_job(tmp_path)["action"]
    assert action == {
        "type": "Https",
        "request": {"uri": "https://example.com/x", "method": "GET"},
        "retryPolicy": {"retryType": "None"},
    }


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            {"authentication_basic": [{"username": "u", "password": "p"}]},
            {"type": "Basic", "username": "u", "password": "p"},
        ),
        (
            {"authentication_certificate": [{"pfx": "cGZ4", "password": "", "thumbprint": "T"}]},
            {"type": "ClientCertificate", "pfx": "cGZ4"},
        ),
        (
            {
                "authentication_active_directory": [
                    {"tenant_id": "t", "client_id": "c", "secret": "s"}
                ]
            },
            {
                "type": "ActiveDirectoryOAuth",
                "tenant": "t",
                "clientId": "c",
                "secret": "s",
                "audience": "https://management.core.windows.net/",
            },
        ),
    ],
)
def test_each_authentication_block(
    tmp_path: Path, block: dict[str, Any], expected: dict[str, Any]
) -> None:
    web = {"url": "https://example.com/x", "method": "Post", "headers": {"A": "b"}, **block}
    request = one_job(tmp_path, action_web=[web])["action"]["request"]
    assert request["authentication"] == expected
    assert request["headers"] == {"A": "b"} and request["method"] == "POST"


def test_a_storage_queue_with_an_error_action_and_a_retry(tmp_path: Path) -> None:
    queue = {
        "storage_account_name": "acct",
        "storage_queue_name": "q",
        "sas_token": "?sv=1",
        "message": "m",
    }
    properties = one_job(
        tmp_path,
        action_web=[],
        action_storage_queue=[queue],
        error_action_web=[{"url": "http://example.com/e", "method": "put", "body": "b"}],
        retry=[{"interval": "", "count": 0}],
    )
    assert properties["action"] == {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": "acct",
            "queueName": "q",
            "message": "m",
            "sasToken": "?sv=1",
        },
        "errorAction": {
            "type": "Http",
            "request": {"uri": "http://example.com/e", "method": "PUT", "body": "b"},
        },
        "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:00:30", "retryCount": 4},
    }


def test_a_recurrence_keeps_only_what_is_set(tmp_path: Path) -> None:
    recurrence = {
        "frequency": "month",
        "interval": 2,
        "count": 0,
        "end_time": "2031-01-01T00:00:00Z",
        "minutes": [30, 0],
        "hours": [],
        "week_days": [],
        "month_days": [],
        "monthly_occurrences": [{"day": "friday", "occurrence": -1}],
    }
    properties = one_job(tmp_path, recurrence=[recurrence], state="Completed", start_time="")
    assert properties["recurrence"] == {
        "frequency": "month",
        "interval": 2,
        "endTime": "2031-01-01T00:00:00Z",
        "schedule": {
            "minutes": [0, 30],
            "monthlyOccurrences": [{"day": "Friday", "occurrence": -1}],
        },
    }
    assert properties["state"] == "Disabled" and "startTime" not in properties
    assert "state" not in one_job(tmp_path, state="Faulted")


def test_a_sensitive_value_not_shown_is_left_out_and_named(tmp_path: Path) -> None:
    web = {"url": "https://e.com", "authentication_basic": [{"username": "u", "password": ""}]}
    document = tf(JOB, job_values(action_web=[web]))
    (found,) = read(tmp_path, show(document))
    assert found.body["properties"]["action"]["request"]["authentication"] == {
        "type": "Basic",
        "username": "u",
    }
    assert found.secret_hint == (
        "the state does not show it: --set"
        " 'azurerm_scheduler_job.a.action_web.0.authentication_basic.0.password=…'"
    )
    given = {"azurerm_scheduler_job.a.action_web.0.authentication_basic.0.password": "p"}
    (filled,) = read(tmp_path, show(document), given)
    assert filled.body["properties"]["action"]["request"]["authentication"]["password"] == "p"


def test_collections_come_first_and_data_sources_are_skipped(tmp_path: Path) -> None:
    collection = {
        "name": "jc",
        "resource_group_name": "rg",
        "location": "westus",
        "sku": "p10premium",
        "state": "",
        "tags": {},
        "quota": [
            {"max_job_count": 0, "max_recurrence_frequency": "minute", "max_retry_interval": 2}
        ],
    }
    found = read(
        tmp_path,
        show(
            tf(JOB, job_values()),
            tf("azurerm_scheduler_job_collection", collection, "x", mode="data"),
            tf("azurerm_scheduler_job_collection", collection),
            tf("azurerm_storage_account", {"name": "s"}),
        ),
    )
    assert [d.label for d in found] == ["rg/jc", "rg/jc/j"]
    assert found[0].body == {
        "location": "westus",
        "properties": {
            "sku": {"name": "p10premium"},
            "quota": {"maxJobCount": 0, "maxRecurrence": {"frequency": "minute", "interval": 2}},
        },
    }


def test_a_value_known_only_after_apply_is_named(tmp_path: Path) -> None:
    values = job_values()
    del values["resource_group_name"]
    unknown = {"after_unknown": {"resource_group_name": True}}
    change = {"type": JOB, "address": f"{JOB}.a", "change": unknown}
    document = show(tf(JOB, values), plan={"resource_changes": [change]})
    with pytest.raises(SourceError, match="resource_group_name is known only after apply"):
        read(tmp_path, document)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    (moved,) = read_terraform(path, {}, "elsewhere").documents
    assert moved.label == "elsewhere/jc/j"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"resources": []}, "not the output of `terraform show -json`"),
        (show(tf(JOB, job_values(action_web=[]))), "one of action_web or action_storage_queue"),
        (show(tf(JOB, job_values(action_web=[{"method": "get"}]))), "action_web.0.url is required"),
        (show(tf(JOB, {**job_values(), "name": ""})), "azurerm_scheduler_job.a: name is required"),
        ({"values": {"root_module": {"child_modules": [{"child_modules": [{}]}]}}}, None),
    ],
)
def test_what_cannot_be_read_is_one_line(
    tmp_path: Path, document: dict[str, Any], message: str | None
) -> None:
    if message is None:
        assert read(tmp_path, document) == []
        return
    with pytest.raises(SourceError) as caught:
        read(tmp_path, document)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_bounds(tmp_path: Path) -> None:
    deep: dict[str, Any] = {}
    for _ in range(40):
        deep = {"child_modules": [deep]}
    with pytest.raises(SourceError, match="modules nested more than 32 deep"):
        read(tmp_path, {"values": {"root_module": deep}})
    many = show(*(tf(JOB, job_values(name=f"j{i}"), f"a{i}") for i in range(801)))
    with pytest.raises(SourceError, match="801 Scheduler resources; at most 800 per import"):
        read(tmp_path, many)
    too_deep = {f"{JOB}.a." + ".".join(["x"] * 9): "v"}
    with pytest.raises(SourceError, match="a path of at most 8 parts"):
        read(tmp_path, show(tf(JOB, job_values())), too_deep)
