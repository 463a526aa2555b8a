"""Logic Apps both ways through a real `horarium serve`: `import --from logicapp` (the public
quickstart in tests/cli/corpus/logicapp and workflows written here: what is carried and what is
listed, `--strict`, parameters and secrets, the dry-run table, idempotence, `upcoming` against
what the workflow defines) and `export --to logicapp` (what each job becomes, what it cannot
express, and a round trip that keeps the executions)."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.api.api_client import Api
from tests.cli.cli_runner import Cli, one_line_error, rows

CORPUS = Path(__file__).parent / "corpus" / "logicapp"


def logicapp(cli: Cli, source: Path, *args: str, collection: str = "la") -> Any:
    where = ("--resource-group", "rg1", "--collection", collection)
    return cli("import", "--from", "logicapp", str(source), *where, *args)


def upcoming(api: Api, collection: str, job: str, count: int) -> list[str]:
    response = api.get(api.job(collection, job) + "/upcoming", params={"count": count})
    assert response.status_code == 200, response.text
    return [e["executionTime"] for e in response.json()["value"]]


def new_collection(api: Api, name: str = "la") -> None:
    response = api.put(
        api.collection(name), {"location": "westus", "properties": {"sku": {"name": "Standard"}}}
    )
    assert response.status_code in (200, 201), response.text


def write(tmp_path: Path, document: dict[str, Any], name: str = "nightly.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def weekly_workflow(**inputs: Any) -> dict[str, Any]:
    """Mondays and Thursdays at 06:30 in Berlin, from 2030-03-01, POSTing a JSON body."""
    return {
        "definition": {
            "$schema": "https://schema.management.azure.com/providers/Microsoft.Logic/schemas/2016-06-01/workflowdefinition.json#",
            "contentVersion": "1.0.0.0",
            "parameters": {
                "base": {"type": "string", "defaultValue": "http://127.0.0.1:9"},
                "password": {"type": "securestring"},
            },
            "triggers": {
                "Recurrence": {
                    "type": "Recurrence",
                    "recurrence": {
                        "frequency": "Week",
                        "interval": 1,
                        "startTime": "2030-03-01T00:00:00",
                        "timeZone": "W. Europe Standard Time",
                        "schedule": {
                            "weekDays": ["Monday", "Thursday"],
                            "hours": [6],
                            "minutes": [30],
                        },
                    },
                }
            },
            "actions": {
                "HTTP": {
                    "type": "Http",
                    "inputs": {
                        "method": "post",
                        "uri": "@{parameters('base')}/nightly",
                        "queries": {"full": "1"},
                        "body": {"report": "nightly"},
                        "retryPolicy": {"type": "fixed", "count": 2, "interval": "PT1M"},
                        **inputs,
                    },
                    "runAfter": {},
                },
                "Condition": {
                    "type": "If",
                    "expression": {"and": [{"equals": ["@outputs('HTTP')['statusCode']", 500]}]},
                    "actions": {},
                    "runAfter": {"HTTP": ["Succeeded"]},
                },
            },
            "outputs": {},
        }
    }


def berlin_slots(count: int) -> list[str]:
    """Mondays and Thursdays at 06:30 Berlin time from 2030-03-01, counted day by day (CET is
    UTC+1 until 2030-03-31, CEST UTC+2 after)."""
    found, day = [], datetime(2030, 3, 1, tzinfo=UTC)
    while len(found) < count:
        if day.weekday() in (0, 3):
            offset = 2 if day >= datetime(2030, 3, 31, tzinfo=UTC) else 1
            at = day + timedelta(hours=6 - offset, minutes=30)
            found.append(at.strftime("%Y-%m-%dT%H:%M:%SZ"))
        day += timedelta(days=1)
    return found


# -- import ---------------------------------------------------------------------------------------


def test_the_quickstart_template_and_its_deployed_definition_import_as_one_job(
    cli: Cli, api: Api
) -> None:
    new_collection(api)
    template = CORPUS / "quickstart-logic-app-create.json"
    lacking = logicapp(cli, template)
    assert lacking.exit_code == 2
    assert one_line_error(lacking) == (
        f"Error: {template}: resource 'Microsoft.Logic/workflows'"
        " \"[parameters('logicAppName')]\": name: parameter 'logicAppName' has no value: give it"
        " with --set logicAppName=… or --parameters"
    )
    assert api.get(api.job("la", "status")).status_code == 404
    before = datetime.now(UTC).replace(microsecond=0)
    result = logicapp(cli, template, "--set", "logicAppName=status")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Imported the workflow {template} into {api.subscription}/rg1/la: collections 0"
        " created, 0 replaced, 0 unchanged; jobs 1 created, 0 replaced, 0 unchanged; 0 failed."
    )
    job = api.get(api.job("la", "status")).json()["properties"]
    assert job["action"]["request"] == {
        "uri": "https://status.azure.com/en-us/status/",
        "method": "GET",
    }
    assert job["recurrence"] == {"frequency": "hour", "interval": 1}
    # No startTime: at once, then every hour from then.
    listed = [datetime.fromisoformat(t) for t in upcoming(api, "la", "status", 3)]
    assert before <= listed[0] <= datetime.now(UTC)
    assert [b - a for a, b in itertools.pairwise(listed)] == [timedelta(hours=1)] * 2
    # The definition the template deploys is the same job: nothing to change.
    definition = CORPUS / "quickstart-logic-app-create.definition.json"
    again = logicapp(cli, definition, "--job", "status")
    assert again.exit_code == 0, again.output
    assert "jobs 0 created, 0 replaced, 1 unchanged" in again.stdout


def test_a_workflow_imports_with_what_it_cannot_carry_listed(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    new_collection(api)
    source = write(tmp_path, weekly_workflow())
    dry = logicapp(cli, source, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert rows(dry.stdout)[1] == [
        "rg1/la/nightly",
        "create",
        "2030-03-04 06:30 CET, 2030-03-07 06:30 CET, 2030-03-11 06:30 CET",
    ]
    assert f"Not carried from {source}:\n  action 'Condition' (If)\n" in dry.stdout

    result = logicapp(cli, source)
    assert result.exit_code == 0, result.output
    job = api.get(api.job("la", "nightly")).json()["properties"]
    assert job["action"]["request"] == {
        "uri": "http://127.0.0.1:9/nightly?full=1",
        "method": "POST",
        "body": '{"report": "nightly"}',
        "headers": {"Content-Type": "application/json"},
    }
    assert job["action"]["retryPolicy"] == {
        "retryType": "fixed",
        "retryInterval": "00:01:00",
        "retryCount": 2,
    }
    assert upcoming(api, "la", "nightly", 12) == berlin_slots(12)
    again = logicapp(cli, source)
    assert "jobs 0 created, 0 replaced, 1 unchanged" in again.stdout

    strict = logicapp(cli, source, "--strict", "--job", "strict")
    assert strict.exit_code == 2
    assert one_line_error(strict) == (
        f"Error: {source}: --strict: not carried: action 'Condition' (If) (nothing sent)"
    )
    assert api.get(api.job("la", "strict")).status_code == 404


def test_a_secret_parameter_without_a_value_is_never_invented(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    new_collection(api)
    auth = {"type": "Basic", "username": "robot", "password": "@parameters('password')"}
    source = write(
        tmp_path,
        weekly_workflow(authentication=auth, headers={"X-Run": "@{utcNow()}"}),
        "secure.json",
    )
    dry = logicapp(cli, source, "--dry-run")
    assert dry.exit_code == 1
    assert rows(dry.stdout)[1][:2] == ["rg1/la/secure", "needs secret"]
    lacking = logicapp(cli, source)
    assert lacking.stderr.splitlines() == [
        "Error: rg1/la/secure: needs properties.action.request.authentication.password (the"
        " workflow parameter 'password' has no value: --set password=…)"
    ]
    assert (
        "  action 'HTTP': inputs.headers.X-Run: the expression '@{utcNow()}' (sent as written)"
        in (lacking.stdout)
    )
    given = logicapp(cli, source, "--set", "password=s3cret", "--set", "base=http://127.0.0.1:8")
    assert given.exit_code == 0, given.output
    request = api.get(api.job("la", "secure")).json()["properties"]["action"]["request"]
    assert request["authentication"] == {"type": "Basic", "username": "robot"}
    assert request["uri"] == "http://127.0.0.1:8/nightly?full=1"
    unknown = logicapp(cli, source, "--set", "nope=1")
    assert one_line_error(unknown) == (
        f"Error: {source}: --set nope: the workflow declares no parameter 'nope'"
    )


def test_a_workflow_without_a_recurrence_or_an_http_first_action_is_refused(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    manual = weekly_workflow()
    manual["definition"]["triggers"] = {"manual": {"type": "Request", "kind": "Http"}}
    source = write(tmp_path, manual, "manual.json")
    assert one_line_error(logicapp(cli, source)) == (
        f"Error: {source}: no Recurrence trigger (a job runs on a schedule)"
    )
    mail = weekly_workflow()
    mail["definition"]["actions"]["HTTP"]["type"] = "ApiConnection"
    source = write(tmp_path, mail, "mail.json")
    assert one_line_error(logicapp(cli, source)) == (
        f"Error: {source}: the first action 'HTTP' is ApiConnection, not Http"
    )
    no_place = cli("import", "--from", "logicapp", str(source), "--resource-group", "rg1")
    assert one_line_error(no_place) == (
        "Error: name where the job goes: --resource-group G --collection C"
    )


# -- export ---------------------------------------------------------------------------------------


def test_export_writes_one_workflow_per_job_and_a_round_trip_keeps_the_executions(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    new_collection(api, "src")
    new_collection(api, "back")
    weekly = {
        "startTime": "2030-03-01T00:00:00",
        "action": {
            "type": "Http",
            "request": {"uri": "http://127.0.0.1:9/w", "method": "PUT", "body": "x"},
            "retryPolicy": {"retryType": "None"},
            "errorAction": {
                "type": "Http",
                "request": {"uri": "http://127.0.0.1:9/e", "method": "POST"},
            },
        },
        "recurrence": {
            "frequency": "Week",
            "count": 40,
            "timeZone": "Europe/Berlin",
            "schedule": {"weekDays": ["Monday", "Thursday"], "hours": [6], "minutes": [30]},
        },
    }
    cron = {
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/c", "method": "GET"}},
        "recurrence": {"cron": "*/5 * * * *"},
    }
    for name, properties in (("weekly", weekly), ("cron", cron)):
        assert api.put(api.job("src", name), {"properties": properties}).status_code == 201
    folder = tmp_path / "workflows"
    result = cli(
        "export", str(folder), "--to", "logicapp", "--resource-group", "rg1", "--collection", "src"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"Wrote 1 workflow to {folder}; 1 job not written (below).",
        "Not expressed in Logic Apps:",
        "  rg1/src/cron: recurrence.cron '*/5 * * * *': no Logic Apps schedule",
        "  rg1/src/weekly: recurrence.count 40: Logic Apps has no count; it runs on",
    ]
    written = json.loads((folder / "rg1" / "src" / "weekly.workflow.json").read_text())[
        "definition"
    ]
    assert written["triggers"]["Recurrence"]["recurrence"] == {
        "frequency": "Week",
        "interval": 1,
        "startTime": "2030-03-01T00:00:00",
        "timeZone": "W. Europe Standard Time",
        "schedule": {"hours": [6], "minutes": [30], "weekDays": ["Monday", "Thursday"]},
    }
    assert written["actions"]["Error_action"]["runAfter"] == {"HTTP": ["Failed", "TimedOut"]}
    assert not (folder / "rg1" / "src" / "cron.workflow.json").exists()

    back = logicapp(cli, folder / "rg1" / "src" / "weekly.workflow.json", collection="back")
    assert back.exit_code == 0, back.output
    assert "Not carried" not in back.stdout
    action = api.get(api.job("back", "weekly")).json()["properties"]["action"]
    assert action["errorAction"]["request"] == {"uri": "http://127.0.0.1:9/e", "method": "POST"}
    assert (
        upcoming(api, "back", "weekly", 12)
        == upcoming(api, "src", "weekly", 12)
        == berlin_slots(12)
    )


# -- more of the public corpus -----------------------------------------------------------------

SCALING = {
    "logicAppName": "scale-hosts",
    "webhookURI": "http://127.0.0.1:9/webhooks?token=t0k",
    "actionSettingsBody": '{"HostPoolName": "pool1"}',
}
SCALING_SETS = [arg for name, value in SCALING.items() for arg in ("--set", f"{name}={value}")]


def test_the_wvd_scaling_workflow_posts_to_its_webhook_every_fifteen_minutes(
    cli: Cli, api: Api
) -> None:
    new_collection(api, "wvd")
    template = CORPUS / "rds-wvd-scaling-logicAppCreationTemplate.json"
    before = datetime.now(UTC).replace(microsecond=0)
    result = logicapp(cli, template, *SCALING_SETS, collection="wvd")
    assert result.exit_code == 0, result.output
    job = api.get(api.job("wvd", "scale-hosts")).json()["properties"]
    # Automation webhooks carry their secret in the query: the API shows it masked.
    assert job["action"]["request"] == {
        "uri": "http://127.0.0.1:9/webhooks?token=***",
        "method": "POST",
        "body": '{"HostPoolName": "pool1"}',
    }
    # recurrenceInterval's default, 15 minutes, from the job's creation.
    listed = [datetime.fromisoformat(t) for t in upcoming(api, "wvd", "scale-hosts", 4)]
    assert before <= listed[0] <= datetime.now(UTC)
    assert [b - a for a, b in itertools.pairwise(listed)] == [timedelta(minutes=15)] * 3


def test_public_workflows_that_cannot_be_jobs_stop_naming_why(cli: Cli, api: Api) -> None:
    new_collection(api, "wvd")
    webhook = CORPUS / "rds-wvd-scaling-azureLogicAppCreation.json"
    result = logicapp(
        cli, webhook, *SCALING_SETS, "--set", "recurrenceInterval=20", collection="wvd"
    )
    assert result.exit_code == 2
    assert one_line_error(result) == (
        f"Error: {webhook}: action 'HTTP_Webhook': inputs.uri is not a plain URL (an"
        " expression, or missing)"
    )
    function = CORPUS / "quickstart-logic-app-and-function-app.json"
    result = logicapp(cli, function, collection="wvd")
    assert result.exit_code == 2
    assert one_line_error(result) == (
        f"Error: {function}: no Recurrence trigger (a job runs on a schedule)"
    )
    assert api.get(api.collection("wvd") + "/jobs").json()["value"] == []


def test_a_templates_unseen_client_secret_is_asked_for_by_its_template_parameter(
    cli: Cli, api: Api
) -> None:
    new_collection(api, "orders")
    template = CORPUS / "quickstart-logic-app-custom-api-hostname.json"
    values = {
        "tenantId": "contoso.onmicrosoft.com",
        "webAppName": "orders-api",
        "webAppClientId": "api://orders",
        "logicAppName": "ping-orders",
        "logicAppClientID": "11111111-2222-3333-4444-555555555555",
    }
    sets = [arg for name, value in values.items() for arg in ("--set", f"{name}={value}")]
    lacking = logicapp(cli, template, *sets, collection="orders")
    assert lacking.exit_code == 1
    assert lacking.stderr.splitlines() == [
        "Error: rg1/orders/ping-orders: needs properties.action.request.authentication.secret"
        " (the template parameter 'logicAppClientSecret' has no value: --set"
        " logicAppClientSecret=…)"
    ]
    assert api.get(api.job("orders", "ping-orders")).status_code == 404
    given = logicapp(
        cli, template, *sets, "--set", "logicAppClientSecret=s3cret", collection="orders"
    )
    assert given.exit_code == 0, given.output
    request = api.get(api.job("orders", "ping-orders")).json()["properties"]["action"]["request"]
    assert request["uri"] == "https://orders-api.azurewebsites.net"
    assert request["authentication"]["type"] == "ActiveDirectoryOAuth"
