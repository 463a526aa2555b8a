"""`horarium.importers.logicapp`: workflow definitions read into a job, and jobs written as
workflow definitions (pure: dicts in, dicts out)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from horarium.importers.arm import Scope
from horarium.importers.documents import SourceError
from horarium.importers.logicapp import read_logicapp, windows_zone, workflow_of
from horarium.importers.logicapp.reading import read_workflow


def workflow(recurrence: dict[str, Any] | None = None, **inputs: Any) -> dict[str, Any]:
    return {
        "triggers": {
            "every": {"type": "recurrence", "recurrence": recurrence or {"frequency": "Day"}}
        },
        "actions": {
            "call": {
                "type": "Http",
                "inputs": {"method": "get", "uri": "https://e.com/a", **inputs},
            }
        },
    }


def test_a_definition_in_any_of_its_wrappings() -> None:
    bare = read_workflow(workflow(), {})
    assert read_workflow({"definition": workflow()}, {}).body == bare.body
    resource = {"name": "w", "properties": {"definition": workflow(), "state": "Enabled"}}
    assert read_workflow(resource, {}).body == bare.body
    assert bare.body["properties"] == {
        "recurrence": {"frequency": "Day"},
        "action": {"type": "Https", "request": {"uri": "https://e.com/a", "method": "GET"}},
    }
    assert bare.not_carried == []


def test_the_recurrence_moves_its_start_to_the_job_and_reads_numbers_written_as_text() -> None:
    recurrence = {
        "frequency": "Month",
        "interval": "2",
        "startTime": "2030-01-01T08:00:00",
        "timeZone": "Pacific Standard Time",
        "schedule": {"monthDays": ["1", 15], "hours": ["8"]},
        "weird": 1,
    }
    job = read_workflow(workflow(recurrence), {})
    assert job.body["properties"]["startTime"] == "2030-01-01T08:00:00"
    assert job.body["properties"]["recurrence"] == {
        "frequency": "Month",
        "interval": 2,
        "timeZone": "Pacific Standard Time",
        "schedule": {"monthDays": [1, 15], "hours": [8]},
    }
    assert job.not_carried == ["trigger 'every': recurrence.weird"]


def test_parameters_queries_retries_and_authentication() -> None:
    definition = workflow(
        uri="@parameters('base')",
        queries={"a": "1 2"},
        headers={"X-Key": "@{parameters('key')}-v"},
        retryPolicy={
            "type": "exponential",
            "count": 3,
            "interval": "PT10S",
            "maximumInterval": "PT1H",
        },
        authentication={
            "type": "ActiveDirectoryOAuth",
            "tenant": "t",
            "audience": "https://a",
            "clientId": "c",
            "secret": "@parameters('secret')",
        },
        cookie="c=1",
    )
    definition["parameters"] = {
        "base": {"type": "string", "defaultValue": "http://x/y"},
        "key": {"type": "string"},
        "secret": {"type": "securestring"},
    }
    job = read_workflow(
        {"properties": {"definition": definition, "parameters": {"key": {"value": "k"}}}}, {}
    )
    action = job.body["properties"]["action"]
    assert action["request"]["uri"] == "http://x/y?a=1+2" and action["type"] == "Http"
    assert action["request"]["headers"] == {"X-Key": "k-v"}
    assert action["request"]["authentication"] == {
        "type": "ActiveDirectoryOAuth",
        "tenant": "t",
        "audience": "https://a",
        "clientId": "c",
    }
    assert job.unseen == {"properties.action.request.authentication.secret": "secret"}
    assert action["retryPolicy"] == {
        "retryType": "Exponential",
        "retryCount": 3,
        "retryInterval": "PT10S",
        "maxRetryInterval": "PT1H",
    }
    assert job.not_carried == ["action 'call': inputs.cookie"]
    given = read_workflow({"definition": definition}, {"secret": "s", "base": "http://z"})
    assert given.body["properties"]["action"]["request"]["authentication"]["secret"] == "s"
    assert given.unseen == {}


def test_what_is_listed_and_what_stops_the_import() -> None:
    definition = workflow(authentication={"type": "ManagedServiceIdentity"}, body="@@literal")
    definition["triggers"]["http"] = {"type": "Request"}
    definition["triggers"]["every"]["conditions"] = [{"expression": "@true"}]
    definition["actions"]["mail"] = {"type": "ApiConnection", "runAfter": {"call": ["Succeeded"]}}
    job = read_workflow(definition, {})
    assert job.not_carried == [
        "trigger 'http' (Request)",
        "trigger 'every': conditions",
        "action 'call': inputs.authentication (ManagedServiceIdentity)",
        "action 'mail' (ApiConnection)",
    ]
    assert job.body["properties"]["action"]["request"]["body"] == "@@literal"
    with pytest.raises(SourceError, match=r"recurrence\.interval is an expression"):
        read_workflow(workflow({"frequency": "Day", "interval": "@parameters('n')"}), {})
    with pytest.raises(SourceError, match=r"inputs\.uri is not a plain URL"):
        read_workflow(workflow(uri="@{body('x')}"), {})
    with pytest.raises(SourceError, match="no first action"):
        read_workflow(
            {
                "triggers": workflow()["triggers"],
                "actions": {"a": {"type": "Http", "runAfter": {"b": []}}},
            },
            {},
        )


# -- writing ----------------------------------------------------------------------------------


def http_job(**properties: Any) -> dict[str, Any]:
    action = {"type": "Https", "request": {"uri": "https://e.com", "method": "GET"}}
    return {"properties": {"action": action, **properties}}


@pytest.mark.parametrize(
    ("zone", "windows"),
    [
        ("Europe/Berlin", "W. Europe Standard Time"),
        ("europe/paris", "Romance Standard Time"),
        ("Pacific Standard Time", "Pacific Standard Time"),
        ("UTC", "UTC"),
        ("Nowhere/Else", None),
    ],
)
def test_windows_names_of_zones(zone: str, windows: str | None) -> None:
    assert windows_zone(zone) == windows


def test_a_year_is_twelve_months_and_times_are_wall_clock_in_the_zone() -> None:
    recurrence = {
        "frequency": "year",
        "interval": 2,
        "timeZone": "Asia/Kolkata",
        "endTime": "2031-01-01T00:00:00Z",
    }
    out = workflow_of(http_job(startTime="2030-01-01T00:00:00Z", recurrence=recurrence))
    assert out.definition is not None
    assert out.definition["triggers"]["Recurrence"]["recurrence"] == {
        "frequency": "Month",
        "interval": 24,
        "timeZone": "India Standard Time",
        "startTime": "2030-01-01T05:30:00",
        "endTime": "2031-01-01T05:30:00",
    }
    assert out.not_expressed == []
    utc = workflow_of(
        http_job(startTime="2030-01-01T00:00:00+01:00", recurrence={"frequency": "Day"})
    )
    assert utc.definition is not None
    assert (
        utc.definition["triggers"]["Recurrence"]["recurrence"]["startTime"]
        == "2029-12-31T23:00:00Z"
    )


def test_what_a_workflow_cannot_express() -> None:
    assert workflow_of(http_job()).not_expressed == [
        "a one-time job: Logic Apps has no one-time trigger"
    ]
    queue = {"properties": {"action": {"type": "StorageQueue"}, "recurrence": {"frequency": "Day"}}}
    assert workflow_of(queue).not_expressed == ["a StorageQueue action: only Http is written"]
    recurrence = {
        "frequency": "Day",
        "excludeCalendars": ["holidays"],
        "onExcluded": "Skip",
        "jitter": "PT1M",
        "timeZone": "Antarctica/Troll",
    }
    auth = {"type": "Basic", "username": "u"}
    job = http_job(recurrence=recurrence, state="disabled", executionPolicy={"overlap": "Skip"})
    job["properties"]["action"]["request"]["authentication"] = auth
    job["properties"]["action"]["errorAction"] = {"type": "ServiceBusQueue"}
    job["properties"]["action"]["retryPolicy"] = {
        "retryType": "fixed",
        "retryInterval": "00:01:30",
        "retryCount": 2,
    }
    out = workflow_of(job)
    assert out.definition is not None
    assert out.definition["actions"]["HTTP"]["inputs"]["retryPolicy"] == {
        "type": "fixed",
        "count": 2,
        "interval": "PT1M30S",
    }
    assert out.not_expressed == [
        "recurrence.timeZone 'Antarctica/Troll': no Windows name; the workflow runs in UTC",
        "recurrence.excludeCalendars",
        "recurrence.onExcluded",
        "recurrence.jitter",
        "properties.action.request.authentication.password: not exported (the API never"
        " returns it); add it",
        "the error action (ServiceBusQueue): only Http is written",
        "properties.executionPolicy",
        "state Disabled: disable the workflow after creating it",
    ]


def test_an_arm_template_deploys_one_job_per_workflow(tmp_path: Path) -> None:
    workflow_resource = {
        "type": "Microsoft.Logic/workflows",
        "apiVersion": "2019-05-01",
        "name": "[concat('wf-', copyIndex())]",
        "copy": {"name": "loop", "count": "[parameters('count')]"},
        "condition": "[not(equals(copyIndex(), 1))]",
        "properties": {
            "definition": workflow(uri="[concat('https://e.com/', copyIndex())]"),
        },
    }
    template = {
        "parameters": {"count": {"type": "int", "defaultValue": 2}},
        "resources": [
            {"type": "Microsoft.Web/sites", "name": "[reference('x')]"},
            workflow_resource,
        ],
    }
    path = tmp_path / "azuredeploy.json"
    path.write_text(json.dumps(template))
    scope = Scope("s", "rg", None)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    with pytest.raises(SourceError, match=r"not\(\) is not supported"):
        read_logicapp(path, {}, ("rg", "jc", None), scope, now)
    workflow_resource["condition"] = "[equals(copyIndex(), copyIndex())]"
    path.write_text(json.dumps(template))
    found = read_logicapp(path, {"count": "2"}, ("rg", "jc", None), scope, now)
    assert [f.document.label for f in found] == ["rg/jc/wf-0", "rg/jc/wf-1"]
    uri = found[1].document.body["properties"]["action"]["request"]["uri"]
    assert uri == "https://e.com/1"
    with pytest.raises(SourceError, match="--job names one job; the template deploys 2"):
        read_logicapp(path, {}, ("rg", "jc", "one"), scope, now)
    path.write_text(json.dumps({"resources": []}))
    with pytest.raises(SourceError, match=r"deploys no Microsoft\.Logic/workflows resource"):
        read_logicapp(path, {}, ("rg", "jc", None), scope, now)


def test_a_templates_secure_parameter_without_a_value_is_a_secret_to_give(
    tmp_path: Path,
) -> None:
    basic = {"type": "Basic", "username": "u", "password": "[parameters('pw')]"}
    definition = workflow(authentication=basic)
    template = {
        "parameters": {"pw": {"type": "securestring"}},
        "resources": [
            {
                "type": "Microsoft.Logic/workflows",
                "name": "wf",
                "properties": {"definition": definition},
            }
        ],
    }
    path = tmp_path / "azuredeploy.json"
    path.write_text(json.dumps(template))
    scope, now = Scope("s", "rg", None), datetime(2030, 1, 1, tzinfo=UTC)
    [found] = read_logicapp(path, {}, ("rg", "jc", None), scope, now)
    request = found.document.body["properties"]["action"]["request"]
    assert request["authentication"] == {"type": "Basic", "username": "u"}
    assert found.document.secret_hint == "the template parameter 'pw' has no value: --set pw=…"
    [given] = read_logicapp(path, {"pw": "s3cret"}, ("rg", "jc", None), scope, now)
    assert given.document.body["properties"]["action"]["request"]["authentication"] == {
        "type": "Basic",
        "username": "u",
        "password": "s3cret",
    }
    # Anywhere but a secret, a value nobody gave stops the import, naming it.
    definition["actions"]["call"]["inputs"]["headers"] = {"x-key": "[parameters('pw')]"}
    path.write_text(json.dumps(template))
    with pytest.raises(SourceError) as caught:
        read_logicapp(path, {}, ("rg", "jc", None), scope, now)
    assert str(caught.value) == (
        f"{path}: definition.actions.call.inputs.headers.x-key uses the secure parameter 'pw',"
        " which has no value; give it with --set pw=… (only a secret may be left out)"
    )
