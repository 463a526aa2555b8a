"""`horarium import --from arm`: public templates (tests/cli/corpus/arm) and templates written
for these tests, through a real `horarium serve`: what imports, what stops before anything is
sent, the dry-run table, idempotence, secrets never seen, the plan's 409, and `upcoming`
executions that match what the template defines."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_client import Api
from tests.cli.cli_runner import Cli, one_line_error, rows

CORPUS = Path(__file__).parent / "corpus" / "arm"
QUICKSTART_PARAMETERS = CORPUS / "quickstart-201-scheduler-webapp.parameters.json"
WEEKDAYS_AT = {(10, 0), (10, 30), (12, 0), (12, 30)}  # the quickstart job's schedule (UTC)


def arm(cli: Cli, template: Path, *args: str) -> Any:
    return cli("import", "--from", "arm", str(template), "--resource-group", "rg1", *args)


def write(tmp_path: Path, template: dict[str, Any], name: str = "azuredeploy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(template))
    return path


def upcoming(api: Api, collection: str, job: str, count: int) -> list[str]:
    response = api.get(api.job(collection, job) + "/upcoming", params={"count": count})
    assert response.status_code == 200, response.text
    return [e["executionTime"] for e in response.json()["value"]]


def weekday_slots(after: datetime, count: int) -> list[str]:
    """The quickstart's executions after `after`, counted out minute by minute (an oracle
    independent of the recurrence engine)."""
    found: list[str] = []
    minute = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while len(found) < count:
        if minute.weekday() < 5 and (minute.hour, minute.minute) in WEEKDAYS_AT:
            found.append(minute.strftime("%Y-%m-%dT%H:%M:%SZ"))
        minute += timedelta(minutes=1)
    return found


# -- the public corpus -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "label"),
    [
        ("quickstart-201-scheduler-webapp.json", "2016-01-01"),
        ("quickstart-scheduler-webapp.json", "2016-03-01"),
    ],
)
def test_quickstarts_that_call_reference_stop_before_anything_is_sent(
    cli: Cli, api: Api, template: str, label: str
) -> None:
    result = arm(
        cli, CORPUS / template, "--parameters", str(QUICKSTART_PARAMETERS), "--location", "westus"
    )
    assert result.exit_code == 2, result.output
    assert one_line_error(result) == (
        f"Error: {CORPUS / template}: job 'GEN-UNIQUE-10/GEN-UNIQUE-10': properties:"
        " reference() is not supported (see docs/migrating.md)"
    )
    assert api.get(api.collection("GEN-UNIQUE-10")).status_code == 404


def test_the_quickstart_with_its_host_name_imports_and_runs_as_it_defines(
    cli: Cli, api: Api
) -> None:
    template = CORPUS / "quickstart-scheduler-webapp-hostname.json"
    given = ("--parameters", str(QUICKSTART_PARAMETERS), "--location", "westus")
    before = datetime.now(UTC)
    result = arm(cli, template, *given)
    after = datetime.now(UTC)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Imported {template} into {api.subscription}/rg1: collections 1 created, 0 replaced,"
        " 0 unchanged; jobs 1 created, 0 replaced, 0 unchanged; 0 failed."
    )
    collection = api.get(api.collection("GEN-UNIQUE-10")).json()
    assert collection["location"] == "West US"
    assert collection["properties"]["sku"] == {"name": "Standard"}
    job = api.get(api.job("GEN-UNIQUE-10", "GEN-UNIQUE-10")).json()["properties"]
    assert job["action"]["request"] == {
        "uri": "http://GEN-UNIQUE.azurewebsites.net",
        "method": "GET",
    }
    # Without a startTime the job runs once when it is created, then on its schedule (Azure's
    # rule, docs/recurrence.md).
    listed = upcoming(api, "GEN-UNIQUE-10", "GEN-UNIQUE-10", 12)
    first = datetime.fromisoformat(listed[0])
    assert before <= first <= after
    assert listed[1:] == weekday_slots(first, 11)

    again = arm(cli, template, *given)
    assert again.exit_code == 0, again.output
    assert "collections 0 created, 0 replaced, 1 unchanged; jobs 0 created, 0 replaced," in (
        again.stdout
    )
    assert upcoming(api, "GEN-UNIQUE-10", "GEN-UNIQUE-10", 12) == listed


# -- templates written for these tests ---------------------------------------------------------

# In the style of 2014-08-01-preview templates: lower-case enum values, integers as text,
# `Frequency` capitalised, an ISO 8601 retry interval, a copy loop over a parameter.
PREVIEW_STYLE: dict[str, Any] = {
    "$schema": "https://schema.management.azure.com/schemas/2015-01-01/deploymentTemplate.json#",
    "contentVersion": "1.0.0.0",
    "parameters": {
        "jc": {"type": "string", "defaultValue": "reports"},
        "cities": {"type": "array", "defaultValue": ["Berlin", "Paris"]},
        "start": {"type": "string", "defaultValue": "[utcNow('yyyy-MM-dd')]"},
    },
    "variables": {
        "hook": "[concat('http://127.0.0.1:9/', toLower(resourceGroup().name))]",
        "cet": "W. Europe Standard Time",
        "rst": "Romance Standard Time",
    },
    "resources": [
        {
            "apiVersion": "2014-08-01-preview",
            "name": "[parameters('jc')]",
            "type": "Microsoft.Scheduler/jobCollections",
            "location": "[resourceGroup().location]",
            "properties": {
                "sku": {"name": "standard"},
                "quota": {
                    "maxJobCount": "10",
                    "maxRecurrence": {"Frequency": "minute", "interval": "1"},
                },
            },
        },
        {
            "apiVersion": "2014-08-01-preview",
            "name": "[format('{0}/{1}', parameters('jc'),"
            " toLower(parameters('cities')[copyIndex()]))]",
            "type": "Microsoft.Scheduler/jobCollections/jobs",
            "copy": {"name": "cities", "count": 2},
            "dependsOn": ["[resourceId('Microsoft.Scheduler/jobCollections', parameters('jc'))]"],
            "properties": {
                "startTime": "[dateTimeAdd(parameters('start'), 'P1D')]",
                "action": {
                    "request": {
                        "uri": "[format('{0}/{1}', variables('hook'), copyIndex(1))]",
                        "method": "POST",
                    },
                    "type": "http",
                    "retryPolicy": {
                        "retryType": "fixed",
                        "retryInterval": "PT1M",
                        "retryCount": "2",
                    },
                },
                "state": "enabled",
                "recurrence": {
                    "frequency": "day",
                    "interval": "1",
                    "schedule": {"hours": [7], "minutes": [0]},
                    "timeZone": "[if(equals(copyIndex(), 0), variables('cet'), variables('rst'))]",
                },
            },
        },
    ],
}


def preview_style() -> dict[str, Any]:
    return json.loads(json.dumps(PREVIEW_STYLE))  # type: ignore[no-any-return]


def test_dry_run_shows_the_plan_and_sends_nothing_then_import_is_idempotent(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    template = write(tmp_path, preview_style())
    given = ("--location", "westeurope", "--utc-now", "2030-03-04T05:06:07Z")
    dry = arm(cli, template, *given, "--dry-run")
    assert dry.exit_code == 0, dry.output
    table = rows(dry.stdout)
    assert table[0] == ["RESOURCE", "ACTION", "FIRST 3 EXECUTIONS (the job's time zone)"]
    assert table[1:4] == [
        ["rg1/reports", "create", "-"],
        [
            "rg1/reports/berlin",
            "create",
            "2030-03-05 07:00 CET, 2030-03-06 07:00 CET, 2030-03-07 07:00 CET",
        ],
        [
            "rg1/reports/paris",
            "create",
            "2030-03-05 07:00 CET, 2030-03-06 07:00 CET, 2030-03-07 07:00 CET",
        ],
    ]
    assert "collections 1 to create, 0 to replace, 0 unchanged; jobs 2 to create" in dry.stdout
    assert api.get(api.collection("reports")).status_code == 404

    result = arm(cli, template, *given)
    assert result.exit_code == 0, result.output
    assert "collections 1 created, 0 replaced, 0 unchanged; jobs 2 created" in result.stdout
    berlin = api.get(api.job("reports", "berlin")).json()
    assert berlin["properties"]["action"]["request"]["uri"] == "http://127.0.0.1:9/rg1/1"
    assert berlin["properties"]["action"]["retryPolicy"]["retryInterval"] == "00:01:00"
    assert upcoming(api, "reports", "berlin", 2) == ["2030-03-05T06:00:00Z", "2030-03-06T06:00:00Z"]
    # Summer time: 07:00 in Paris is 05:00 UTC from 2030-03-31.
    assert upcoming(api, "reports", "paris", 30)[-1] == "2030-04-03T05:00:00Z"

    again = arm(cli, template, *given)
    assert again.exit_code == 0, again.output
    assert (
        "collections 0 created, 0 replaced, 1 unchanged; jobs 0 created, 0 replaced, 2 unchanged"
        in again.stdout
    )
    assert api.get(api.job("reports", "berlin")).json() == berlin

    later = arm(cli, template, "--location", "westeurope", "--utc-now", "2030-03-10T00:00:00Z")
    assert "jobs 0 created, 2 replaced, 0 unchanged" in later.stdout  # utcNow() moved the start


def test_utc_now_without_utc_now_is_noted(cli: Cli, tmp_path: Path) -> None:
    result = arm(cli, write(tmp_path, preview_style()), "--location", "westeurope", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Note: utcNow() in a parameter default was" in result.stdout
    assert "(--utc-now pins it)" in result.stdout


def secure_template() -> dict[str, Any]:
    auth = {"type": "Basic", "username": "robot", "password": "[parameters('password')]"}
    return {
        "parameters": {"password": {"type": "securestring"}},
        "resources": [
            {
                "type": "Microsoft.Scheduler/jobCollections",
                "apiVersion": "2016-03-01",
                "name": "vault",
                "properties": {"sku": {"name": "Standard"}},
                "resources": [
                    {
                        "type": "jobs",
                        "apiVersion": "2016-03-01",
                        "name": "[concat('job', copyIndex())]",
                        "copy": {"name": "jobs", "count": 2},
                        "dependsOn": ["vault"],
                        "properties": {
                            "startTime": "2099-01-01T00:00:00Z",
                            "action": {
                                "type": "Http",
                                "request": {
                                    "uri": "http://127.0.0.1:9/s",
                                    "method": "POST",
                                    "authentication": auth,
                                },
                            },
                        },
                    }
                ],
            }
        ],
    }


def test_a_secret_the_template_does_not_give_is_never_invented(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    template = write(tmp_path, secure_template())
    dry = arm(cli, template, "--dry-run")
    assert dry.exit_code == 1
    assert ["rg1/vault/job0", "needs secret", "2099-01-01 00:00 UTC"] in rows(dry.stdout)

    lacking = arm(cli, template)
    assert lacking.exit_code == 1
    assert (
        "Error: rg1/vault/job0: needs properties.action.request.authentication.password (the"
        " secure parameter 'password' has no value: --set password=… or --parameters)"
    ) in lacking.stderr.splitlines()
    assert "collections 1 created" in lacking.stdout and "2 failed" in lacking.stdout
    assert api.get(api.job("vault", "job0")).status_code == 404

    given = arm(cli, template, "--set", "password=s3cret")
    assert given.exit_code == 0, given.output
    assert "jobs 2 created" in given.stdout
    shown = api.get(api.job("vault", "job0")).json()["properties"]["action"]["request"]
    assert shown["authentication"] == {"type": "Basic", "username": "robot"}

    # Without the secret again: the jobs are unchanged (their stored secret is kept).
    again = arm(cli, template)
    assert again.exit_code == 0, again.output
    assert "jobs 0 created, 0 replaced, 2 unchanged; 0 failed" in again.stdout


def test_a_job_beyond_the_plan_gets_the_apis_own_409_message(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    often = {
        "properties": {
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/f", "method": "GET"}},
            "recurrence": {"frequency": "Minute", "interval": 5},
        }
    }
    template = {
        "resources": [
            {
                "type": "Microsoft.Scheduler/jobCollections",
                "apiVersion": "2016-03-01",
                "name": "free",
                "properties": {"sku": {"name": "Free"}},
            },
            {
                "type": "Microsoft.Scheduler/jobCollections/jobs",
                "apiVersion": "2016-03-01",
                "name": "free/often",
                "dependsOn": ["free"],
                **often,
            },
        ]
    }
    result = arm(cli, write(tmp_path, template))
    assert result.exit_code == 1
    refused = api.put(api.job("free", "direct"), often).json()["error"]
    assert result.stderr.splitlines() == [
        f"Error: rg1/free/often: {refused['code']}: {refused['message']}"
    ]
    assert refused["code"] == "RecurrenceQuotaExceeded"
    assert "collections 1 created" in result.stdout and "1 failed" in result.stdout


def test_options_of_the_wrong_source_are_usage_errors(cli: Cli, tmp_path: Path) -> None:
    template = write(tmp_path, secure_template())
    not_a_folder = cli("import", str(template))
    assert not_a_folder.exit_code == 2
    assert "is not a folder (name a file's kind with --from)" in one_line_error(not_a_folder)
    (tmp_path / "export").mkdir()
    arm_only = cli("import", str(tmp_path / "export"), "--set", "a=b")
    assert arm_only.exit_code == 2
    assert one_line_error(arm_only) == "Error: --set is not for --from export"
    no_group = cli("import", "--from", "arm", str(template))
    assert no_group.exit_code == 2
    assert one_line_error(no_group) == "Error: name the resource group: --resource-group G"
