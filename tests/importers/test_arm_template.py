"""Reading a template: parameters (defaults, a parameters file, `--set`, Key Vault references),
variables, Scheduler resources top level and nested, copy loops, conditions, dependsOn order,
and the mapping of each apiVersion to the API's bodies, secrets included."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from horarium.importers.arm import ArmPlan, Scope, TemplateError, read_arm
from horarium.importers.arm.template import MAX_COPY_COUNT

SCOPE = Scope("sub-1", "rg-a", "westeurope")
NOW = datetime(2030, 1, 1, 8, 0, tzinfo=UTC)
COLLECTION = "Microsoft.Scheduler/jobCollections"
JOB = "Microsoft.Scheduler/jobCollections/jobs"


def http(uri: str = "http://127.0.0.1:9/x") -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "GET"}}


def collection(name: Any = "jc", version: str = "2016-03-01", **extra: Any) -> dict[str, Any]:
    return {
        "type": COLLECTION,
        "apiVersion": version,
        "name": name,
        "properties": {"sku": {"name": "Standard"}},
        **extra,
    }


def job(name: Any, version: str = "2016-03-01", **extra: Any) -> dict[str, Any]:
    body = {"type": JOB, "apiVersion": version, "name": name, "properties": {"action": http()}}
    return body | extra


def read(
    tmp_path: Path,
    template: dict[str, Any],
    *,
    parameters: dict[str, Any] | None = None,
    sets: dict[str, str] | None = None,
) -> ArmPlan:
    path = tmp_path / "azuredeploy.json"
    path.write_text(json.dumps(template))
    values = None
    if parameters is not None:
        values = tmp_path / "azuredeploy.parameters.json"
        values.write_text(json.dumps(parameters))
    return read_arm(path, values, sets or {}, SCOPE, NOW)


def fails(tmp_path: Path, template: dict[str, Any], **kw: Any) -> str:
    with pytest.raises(TemplateError) as caught:
        read(tmp_path, template, **kw)
    return str(caught.value)


def names(plan: ArmPlan) -> list[str]:
    return [item.resource.path for item in plan.items]


# -- resources ---------------------------------------------------------------------------------


def test_top_level_and_nested_resources_are_found_and_others_skipped(tmp_path: Path) -> None:
    template = {
        "resources": [
            {"type": "Microsoft.Web/sites", "apiVersion": "2020-12-01", "name": "[reference('x')]"},
            collection("a", resources=[{**job("one"), "type": "jobs"}]),
            job("a/two"),
        ]
    }
    plan = read(tmp_path, template)
    assert names(plan) == ["a", "a/one", "a/two"]
    assert [i.resource.kind for i in plan.items] == ["collection", "job", "job"]


def test_copy_loops_expand_with_copy_index(tmp_path: Path) -> None:
    template = {
        "parameters": {"count": {"type": "int", "defaultValue": 3}},
        "resources": [
            collection(
                "[concat('jc', copyIndex(1))]",
                copy={"name": "collections", "count": 2},
                resources=[
                    {
                        **job("[format('job-{0}-{1}', copyIndex('collections'), copyIndex())]"),
                        "type": "jobs",
                        "copy": {"name": "jobs", "count": "[parameters('count')]"},
                    }
                ],
            )
        ],
    }
    assert names(read(tmp_path, template)) == [
        "jc1", "jc1/job-0-0", "jc1/job-0-1", "jc1/job-0-2",
        "jc2", "jc2/job-1-0", "jc2/job-1-1", "jc2/job-1-2",
    ]  # fmt: skip


def test_a_copy_count_over_the_limit_is_refused(tmp_path: Path) -> None:
    template = {
        "resources": [collection("[concat('c', copyIndex())]", copy={"name": "n", "count": 801})]
    }
    assert f"copy.count 801 is not in 0..{MAX_COPY_COUNT} (the limit)" in fails(tmp_path, template)


def test_a_false_condition_skips_the_resource_and_its_children(tmp_path: Path) -> None:
    template = {
        "parameters": {"withOld": {"type": "bool", "defaultValue": False}},
        "resources": [
            collection(
                "old", condition="[parameters('withOld')]", resources=[{**job("j"), "type": "jobs"}]
            ),
            collection(
                "new",
                condition="[equals(1, 1)]",
            ),
        ],
    }
    assert names(read(tmp_path, template)) == ["new"]
    assert names(read(tmp_path, template, sets={"withOld": "true"})) == ["old", "old/j", "new"]


def test_depends_on_orders_the_resources(tmp_path: Path) -> None:
    template = {
        "resources": [
            job(
                "b/late",
                dependsOn=["[resourceId('Microsoft.Scheduler/jobCollections/jobs', 'a', 'early')]"],
            ),
            job("a/early", dependsOn=["a"]),
            collection("b"),
            collection("a", dependsOn=["[concat('Microsoft.Scheduler/jobCollections/', 'b')]"]),
        ]
    }
    assert names(read(tmp_path, template)) == ["b", "a", "a/early", "b/late"]


def test_a_depends_on_cycle_is_refused(tmp_path: Path) -> None:
    template = {"resources": [collection("a", dependsOn=["b"]), collection("b", dependsOn=["a"])]}
    assert "dependsOn forms a cycle" in fails(tmp_path, template)


def test_an_unsupported_expression_names_the_resource_and_stops_everything(
    tmp_path: Path,
) -> None:
    bad = job("jc/ping")
    bad["properties"]["action"]["request"]["uri"] = "[reference('site').defaultHostName]"
    message = fails(tmp_path, {"resources": [collection(), bad]})
    assert message == (
        f"{tmp_path / 'azuredeploy.json'}: job 'jc/ping': properties:"
        " reference() is not supported (see docs/migrating.md)"
    )


def test_a_name_that_is_not_collection_slash_job_is_refused(tmp_path: Path) -> None:
    assert "does not name a collection/job" in fails(tmp_path, {"resources": [job("lonely")]})


# -- parameters and variables ------------------------------------------------------------------


def test_parameters_from_defaults_a_file_and_set(tmp_path: Path) -> None:
    template = {
        "parameters": {
            "name": {"type": "string", "defaultValue": "from-default"},
            "group": {"type": "string"},
            "hours": {"type": "array"},
            "every": {"type": "int", "defaultValue": 1},
        },
        "variables": {"full": "[concat(parameters('group'), '-', parameters('name'))]"},
        "resources": [
            collection("[variables('full')]"),
            job(
                "[concat(variables('full'), '/j')]",
                properties={
                    "action": http(),
                    "recurrence": {
                        "frequency": "Day",
                        "interval": "[parameters('every')]",
                        "schedule": {"hours": "[parameters('hours')]"},
                    },
                },
            ),
        ],
    }
    given = {"parameters": {"group": {"value": "g"}, "hours": {"value": [6]}}}
    plan = read(tmp_path, template, parameters=given, sets={"every": "2", "name": "cli"})
    assert names(plan) == ["g-cli", "g-cli/j"]
    recurrence = plan.items[1].body["properties"]["recurrence"]
    assert recurrence == {"frequency": "Day", "interval": 2, "schedule": {"hours": [6]}}


def test_a_missing_parameter_a_typo_and_a_wrong_type_are_named(tmp_path: Path) -> None:
    template = {
        "parameters": {"name": {"type": "string"}},
        "resources": [collection("[parameters('name')]")],
    }
    assert "parameter 'name' has no value: give it with --set name=… or --parameters" in fails(
        tmp_path, template
    )
    assert "the template has no parameter 'nmae'" in fails(tmp_path, template, sets={"nmae": "x"})
    typed = {"parameters": {"n": {"type": "int"}}, "resources": []}
    assert "--set n: 'many' is not a value of type int" in fails(
        tmp_path, typed, sets={"n": "many"}
    )


def test_allowed_values_are_checked(tmp_path: Path) -> None:
    template = {
        "parameters": {"sku": {"type": "string", "allowedValues": ["Free", "Standard"]}},
        "resources": [collection(properties={"sku": {"name": "[parameters('sku')]"}})],
    }
    assert "parameter 'sku': \"P20Premium\" is not one of its allowedValues" in fails(
        tmp_path, template, sets={"sku": "P20Premium"}
    )


def test_a_parameter_only_other_resources_use_needs_no_value(tmp_path: Path) -> None:
    template = {
        "parameters": {"siteName": {"type": "string"}},
        "resources": [
            {
                "type": "Microsoft.Web/sites",
                "apiVersion": "2020-12-01",
                "name": "[parameters('siteName')]",
            },
            collection(),
        ],
    }
    assert names(read(tmp_path, template)) == ["jc"]


def test_utc_now_in_a_default_is_reported(tmp_path: Path) -> None:
    template = {
        "parameters": {"start": {"type": "string", "defaultValue": "[utcNow()]"}},
        "resources": [
            collection(),
            job(
                "jc/j",
                properties={
                    "action": http(),
                    "startTime": "[dateTimeAdd(parameters('start'), 'P1D')]",
                },
            ),
        ],
    }
    plan = read(tmp_path, template)
    assert plan.used_utc_now
    assert plan.items[1].body["properties"]["startTime"] == "2030-01-02T08:00:00Z"


def test_a_variable_that_refers_to_itself_is_refused(tmp_path: Path) -> None:
    template = {
        "variables": {"a": "[variables('a')]"},
        "resources": [collection("[variables('a')]")],
    }
    assert "variables.a refers to itself" in fails(tmp_path, template)


# -- apiVersions and mapping -------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2014-08-01-preview", "2016-01-01", "2016-03-01"])
def test_each_api_version_maps_to_the_same_body(tmp_path: Path, version: str) -> None:
    template = {
        "resources": [
            collection(
                "jc",
                version,
                location="West Europe",
                tags={"team": "b"},
                properties={
                    "sku": {"name": "Standard"},
                    "quota": {
                        "maxJobCount": "10",
                        "maxRecurrence": {"Frequency": "minute", "interval": "1"},
                    },
                },
            ),
            job(
                "jc/j",
                version,
                location="ignored",
                properties={
                    "startTime": "2030-01-01T00:00:00Z",
                    "action": {**http(), "retryPolicy": {"retryType": "Fixed", "retryCount": "2"}},
                    "recurrence": {"frequency": "Hour", "interval": "4", "count": "10"},
                    "state": "Enabled",
                },
            ),
        ]
    }
    plan = read(tmp_path, template)
    assert plan.items[0].body == {
        "location": "West Europe",
        "tags": {"team": "b"},
        "properties": {
            "sku": {"name": "Standard"},
            "quota": {"maxJobCount": 10, "maxRecurrence": {"Frequency": "minute", "interval": 1}},
        },
    }
    assert plan.items[1].body == {
        "properties": {
            "startTime": "2030-01-01T00:00:00Z",
            "action": {**http(), "retryPolicy": {"retryType": "Fixed", "retryCount": 2}},
            "recurrence": {"frequency": "Hour", "interval": 4, "count": 10},
            "state": "Enabled",
        }
    }


@pytest.mark.parametrize(
    ("version", "sent"),
    [("2014-08-01-preview", "P10Premium"), ("2016-01-01", "P10Premium"), ("2016-03-01", "Premium")],
)
def test_premium_of_the_older_versions_is_p10premium(
    tmp_path: Path, version: str, sent: str
) -> None:
    template = {"resources": [collection("jc", version, properties={"sku": {"name": "Premium"}})]}
    assert read(tmp_path, template).items[0].body["properties"]["sku"] == {"name": sent}


def test_an_api_version_scheduler_never_had_is_refused(tmp_path: Path) -> None:
    message = fails(tmp_path, {"resources": [collection("jc", "2019-01-01")]})
    assert "collection 'jc': apiVersion '2019-01-01' is not one of Azure Scheduler's" in message


# -- secrets -----------------------------------------------------------------------------------


def secret_template() -> dict[str, Any]:
    auth = {"type": "Basic", "username": "robot", "password": "[parameters('password')]"}
    action = http()
    action["request"] |= {
        "authentication": auth,
        "headers": {"x-api-key": "[parameters('apiKey')]", "x-plain": "1"},
    }
    return {
        "parameters": {
            "password": {"type": "securestring"},
            "apiKey": {"type": "securestring"},
        },
        "resources": [collection(), job("jc/secure", properties={"action": action})],
    }


def test_a_secret_without_a_value_is_left_out_and_named(tmp_path: Path) -> None:
    item = read(tmp_path, secret_template()).items[1]
    request = item.body["properties"]["action"]["request"]
    assert request["authentication"] == {"type": "Basic", "username": "robot"}
    assert request["headers"] == {"x-api-key": "***", "x-plain": "1"}
    assert item.unseen == {
        "properties.action.request.authentication.password": "password",
        "properties.action.request.headers.x-api-key": "apiKey",
    }


def test_a_secret_given_is_sent(tmp_path: Path) -> None:
    item = read(tmp_path, secret_template(), sets={"password": "pw", "apiKey": "k"}).items[1]
    request = item.body["properties"]["action"]["request"]
    assert request["authentication"]["password"] == "pw"
    assert request["headers"]["x-api-key"] == "k"
    assert item.unseen == {}


def test_a_key_vault_reference_is_a_secret_not_seen(tmp_path: Path) -> None:
    given = {
        "parameters": {
            "password": {
                "reference": {"keyVault": {"id": "/subscriptions/…/vaults/v"}, "secretName": "pw"}
            },
            "apiKey": {"value": "k"},
        }
    }
    item = read(tmp_path, secret_template(), parameters=given).items[1]
    assert item.unseen == {"properties.action.request.authentication.password": "password"}


def test_an_unseen_value_outside_a_secret_field_is_refused(tmp_path: Path) -> None:
    template = secret_template()
    template["resources"][1]["properties"]["action"]["request"]["uri"] = (
        "[concat('https://example.test/?code=', parameters('apiKey'))]"
    )
    message = fails(tmp_path, template, sets={"password": "pw"})
    assert (
        "job 'jc/secure': properties.action.request.uri uses the secure parameter 'apiKey', which"
        " has no value; give it with --set apiKey=… or --parameters" in message
    )


def test_a_template_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"resources": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(TemplateError, match="nested too deeply"):
        read_arm(path, None, {}, SCOPE, NOW)
