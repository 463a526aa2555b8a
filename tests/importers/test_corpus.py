"""The public corpus (tests/cli/corpus, sources and licences in each folder's README) read by the
pure importers: what each file imports as, or the message that stops it, and the first
executions of each job against an oracle that walks the calendar minute by minute (independent
of the recurrence engine)."""

from __future__ import annotations

import calendar
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from horarium.importers.arm import Scope, read_arm
from horarium.importers.documents import Document, SourceError
from horarium.importers.functions import read_functions
from horarium.importers.logicapp import read_logicapp
from horarium.importers.terraform import read_terraform
from horarium.recurrence import preview

CORPUS = Path(__file__).parent.parent / "cli" / "corpus"
SCOPE = Scope("sub-1", "rg-a", "westeurope")
NOW = datetime(2030, 1, 1, 8, 0, tzinfo=UTC)  # a Tuesday
WHERE = ("rg", "jc", None)


def walk(first: datetime, keep: Callable[[datetime], bool], count: int) -> list[datetime]:
    """The first `count` minutes from `first` on (its seconds kept) that `keep` accepts."""
    found: list[datetime] = []
    t = first
    while len(found) < count:
        if keep(t):
            found.append(t)
        t += timedelta(minutes=1)
    return found


def upcoming(document: Document, count: int) -> list[datetime]:
    return preview(document.body["properties"], now=NOW, count=count)


# -- Logic Apps --------------------------------------------------------------------------------


def test_the_bicep_logic_app_sample_imports_as_an_hourly_get() -> None:
    # The template's trigger and action types are written in lower case through variables().
    path = CORPUS / "logicapp" / "bicep-logic-app-create.json"
    [imported] = read_logicapp(path, {}, WHERE, SCOPE, NOW)
    assert imported.document.names == ("jc", "BicepLogicApp")
    assert imported.document.body["properties"]["action"] == {
        "type": "Http",
        "request": {"uri": "http://status.azure.com/en-us/status/", "method": "GET"},
    }
    assert imported.not_carried == []
    # No startTime: the first run when the workflow is created, then every hour from it.
    hourly = walk(NOW, lambda t: (t - NOW) % timedelta(hours=1) == timedelta(0), 6)
    assert upcoming(imported.document, 6) == hourly


SQL_PROC_VALUES = {
    "logicAppName": "nightly",
    "sqlConnectionName": "sql",
    "sqlServer": "db.example.com",
    "sqlDatabase": "reports",
    "sqlUser": "reporter",
    "sqlPassword": "secret",
    "sqlProcedure": "refresh",
}


def test_the_sql_procedure_quickstart_stops_naming_what_stops_it() -> None:
    path = CORPUS / "logicapp" / "quickstart-logic-app-sql-proc.json"
    with pytest.raises(SourceError) as caught:
        read_logicapp(path, {}, WHERE, SCOPE, NOW)
    assert "parameter 'logicAppName' has no value: give it with --set logicAppName=" in str(
        caught.value
    )
    # Given its values, it stops on its first action (a SQL connector call), not on the connection's
    # subscriptionResourceId() in the workflow's parameters, which no job would use.
    with pytest.raises(SourceError) as caught:
        read_logicapp(path, SQL_PROC_VALUES, WHERE, SCOPE, NOW)
    assert str(caught.value) == (
        f"{path}: the first action 'Execute_stored_procedure' is ApiConnection, not Http"
    )


def test_a_template_expression_outside_the_definition_still_stops_an_http_workflow(
    tmp_path: Path,
) -> None:
    template = {
        "resources": [
            {
                "type": "Microsoft.Logic/workflows",
                "name": "w",
                "properties": {
                    "definition": {
                        "triggers": {
                            "r": {"type": "Recurrence", "recurrence": {"frequency": "Day"}}
                        },
                        "actions": {
                            "a": {
                                "type": "Http",
                                "inputs": {"method": "GET", "uri": "https://e.com"},
                            }
                        },
                    },
                    "parameters": {"x": {"value": "[subscriptionResourceId('a/b', 'c')]"}},
                },
            }
        ]
    }
    path = tmp_path / "azuredeploy.json"
    path.write_text(json.dumps(template))
    with pytest.raises(SourceError) as caught:
        read_logicapp(path, {}, WHERE, SCOPE, NOW)
    assert "workflow 'w': properties.parameters: subscriptionResourceId() is not supported" in str(
        caught.value
    )


SCALING = {
    "logicAppName": "scale-hosts",
    "webhookURI": "https://s1.webhook.eus2.azure-automation.net/webhooks?token=t0k",
    "actionSettingsBody": '{"HostPoolName": "pool1"}',
}


def test_the_wvd_scaling_workflow_posts_every_fifteen_minutes() -> None:
    path = CORPUS / "logicapp" / "rds-wvd-scaling-logicAppCreationTemplate.json"
    [imported] = read_logicapp(path, SCALING, WHERE, SCOPE, NOW)
    assert imported.document.names == ("jc", "scale-hosts")
    assert imported.document.body["properties"]["action"] == {
        "type": "Https",
        "request": {
            "uri": SCALING["webhookURI"],
            "method": "POST",
            "body": SCALING["actionSettingsBody"],
        },
    }
    quarter_hours = walk(NOW, lambda t: (t - NOW) % timedelta(minutes=15) == timedelta(0), 5)
    assert upcoming(imported.document, 5) == quarter_hours


@pytest.mark.parametrize(
    ("name", "sets", "message"),
    [
        # The request is written under inputs.subscribe (an HTTP Webhook's shape) on an Http action.
        (
            "rds-wvd-scaling-azureLogicAppCreation.json",
            {**SCALING, "recurrenceInterval": "15"},
            "action 'HTTP_Webhook': inputs.uri is not a plain URL (an expression, or missing)",
        ),
        (
            "rds-wvd-scaling-azureLogicAppCreation.json",
            SCALING,
            "workflow 'scale-hosts': properties.definition: parameter 'recurrenceInterval' has no"
            " value: give it with --set recurrenceInterval=… or --parameters",
        ),
        (
            "quickstart-logic-app-and-function-app.json",
            {},
            "no Recurrence trigger (a job runs on a schedule)",
        ),
    ],
)
def test_public_workflows_that_are_not_jobs_stop_naming_why(
    name: str, sets: dict[str, str], message: str
) -> None:
    path = CORPUS / "logicapp" / name
    with pytest.raises(SourceError) as caught:
        read_logicapp(path, sets, WHERE, SCOPE, NOW)
    assert str(caught.value) == f"{path}: {message}"


CUSTOM_API = {
    "tenantId": "contoso.onmicrosoft.com",
    "webAppName": "orders-api",
    "webAppClientId": "api://orders",
    "logicAppName": "ping-orders",
    "logicAppClientID": "11111111-2222-3333-4444-555555555555",
}


def test_the_custom_api_quickstart_pings_its_web_app_hourly_with_its_oauth_secret() -> None:
    original = CORPUS / "logicapp" / "quickstart-logic-app-custom-api.json"
    with pytest.raises(SourceError) as caught:
        read_logicapp(original, CUSTOM_API, WHERE, SCOPE, NOW)
    assert str(caught.value) == (
        f"{original}: workflow 'ping-orders': properties.definition: reference() is not"
        " supported (see docs/migrating.md)"
    )
    # With the web app's host name written instead of reference(), it imports; the client
    # secret comes from the template's secure parameter, through the workflow's own.
    path = CORPUS / "logicapp" / "quickstart-logic-app-custom-api-hostname.json"
    [lacking] = read_logicapp(path, CUSTOM_API, WHERE, SCOPE, NOW)
    request = lacking.document.body["properties"]["action"]["request"]
    assert request == {
        "uri": "https://orders-api.azurewebsites.net",
        "method": "GET",
        "authentication": {
            "type": "ActiveDirectoryOAuth",
            "tenant": "contoso.onmicrosoft.com",
            "audience": "api://orders",
            "clientId": "11111111-2222-3333-4444-555555555555",
        },
    }
    assert lacking.document.secret_hint == (
        "the template parameter 'logicAppClientSecret' has no value: --set logicAppClientSecret=…"
    )
    given = {**CUSTOM_API, "logicAppClientSecret": "s3cret"}
    [imported] = read_logicapp(path, given, WHERE, SCOPE, NOW)
    authentication = imported.document.body["properties"]["action"]["request"]["authentication"]
    assert authentication["secret"] == "s3cret"
    hourly = walk(NOW, lambda t: (t - NOW) % timedelta(hours=1) == timedelta(0), 4)
    assert upcoming(imported.document, 4) == hourly


# -- Functions ---------------------------------------------------------------------------------


def test_the_functions_timer_templates_run_every_five_minutes() -> None:
    found = read_functions(
        CORPUS / "functions" / "azure-functions-templates", {}, ("rg", "jc"), None
    )
    assert [f.document.names for f in found] == [
        ("jc", "TimerTrigger"),
        ("jc", "TimerTriggerPython"),
    ]
    for imported in found:
        properties = imported.document.body["properties"]
        assert properties["recurrence"] == {"cron": "0 */5 * * * *"}
        name = imported.document.names[1]
        assert properties["action"]["request"]["uri"] == (
            f"http://localhost:7071/admin/functions/{name}"
        )
        assert upcoming(imported.document, 5) == walk(NOW, lambda t: t.minute % 5 == 0, 5)


# -- ARM ---------------------------------------------------------------------------------------


def test_the_scheduler_quickstart_with_its_host_name_runs_weekdays_at_its_four_times() -> None:
    plan = read_arm(
        CORPUS / "arm" / "quickstart-scheduler-webapp-hostname.json",
        CORPUS / "arm" / "quickstart-201-scheduler-webapp.parameters.json",
        {},
        SCOPE,
        NOW,
    )
    [collection, job] = [item.body for item in plan.items]
    assert collection["properties"]["sku"] == {"name": "Standard"}
    at = {(10, 0), (10, 30), (12, 0), (12, 30)}
    weekdays = walk(NOW, lambda t: t.weekday() < 5 and (t.hour, t.minute) in at, 8)
    # No startTime: it runs when created, then on its schedule.
    assert preview(job["properties"], now=NOW, count=9) == [NOW, *weekdays]


# -- Terraform ---------------------------------------------------------------------------------

STATE = CORPUS / "terraform" / "provider-scheduler-jobs-example.state.json"
AT_START = NOW.replace(second=7)  # the jobs' start_time, 14:07:07Z, sets the seconds


def last_sunday(t: datetime) -> bool:
    return t.day + 7 > calendar.monthrange(t.year, t.month)[1]


def at_start_time(t: datetime) -> bool:
    return (t.hour, t.minute) == (14, 7)


def terraform_jobs() -> dict[str, Document]:
    documents = read_terraform(STATE, {}, None).documents
    assert [d.kind for d in documents] == ["collection"] + ["job"] * 6
    return {d.names[1]: d for d in documents if d.kind == "job"}


@pytest.mark.parametrize(
    ("job", "first", "keep"),
    [
        (
            "tfex-web-recurring",  # every 10 minutes from 2019-07-07T14:07:07Z
            AT_START,
            lambda t: (
                (t - datetime(2019, 7, 7, 14, 7, 7, tzinfo=UTC)) % timedelta(minutes=10)
                == timedelta(0)
            ),
        ),
        (
            "tfex-web-recurring_daily-auth_basic",  # hours [0, 12] × minutes [0, 15, 30, 45]
            NOW,
            lambda t: t.hour in (0, 12) and t.minute in (0, 15, 30, 45),
        ),
        (
            "tfex-web-recurring_weekly-auth_cert",  # Saturdays and Sundays
            AT_START,
            lambda t: t.weekday() in (5, 6) and at_start_time(t),
        ),
        (
            "tfex-schedulerjob-storage_queue",
            AT_START,
            lambda t: t.weekday() == 6 and at_start_time(t),
        ),
        (
            "tfex-web-recurring_monthly-auth_ad",  # the first, third and last Sunday
            AT_START,
            lambda t: (
                t.weekday() == 6
                and at_start_time(t)
                and (t.day <= 7 or 15 <= t.day <= 21 or last_sunday(t))
            ),
        ),
    ],
)
def test_the_provider_example_jobs_run_as_the_configuration_defines(
    job: str, first: datetime, keep: Callable[[datetime], bool]
) -> None:
    document = terraform_jobs()[job]
    assert upcoming(document, 8) == walk(first, keep, 8)


def test_the_provider_example_carries_what_the_state_shows_and_asks_for_the_rest() -> None:
    jobs = terraform_jobs()
    once: dict[str, Any] = jobs["tfex-web-once-now"].body["properties"]
    assert once["state"] == "Disabled"  # Completed in the state: it ran in 1987
    assert once["action"]["retryPolicy"] == {
        "retryType": "Fixed",
        "retryInterval": "00:05:00",
        "retryCount": 4,
    }
    assert jobs["tfex-web-recurring"].body["properties"]["recurrence"]["count"] == 10
    monthly = jobs["tfex-web-recurring_monthly-auth_ad"].body["properties"]["action"]
    assert monthly["errorAction"]["request"]["authentication"] == {
        "type": "Basic",
        "username": "login",
        "password": "apassword",
    }
    cert = jobs["tfex-web-recurring_weekly-auth_cert"]
    assert cert.body["properties"]["action"]["request"]["authentication"] == {
        "type": "ClientCertificate"
    }
    assert "action_web.0.authentication_certificate.0.pfx=" in cert.secret_hint
    queue = jobs["tfex-schedulerjob-storage_queue"]
    assert "sasToken" not in queue.body["properties"]["action"]["queueMessage"]
    assert "action_storage_queue.0.sas_token=" in queue.secret_hint


ACCEPTANCE = CORPUS / "terraform" / "provider-acceptance-tests.state.json"


def test_the_provider_acceptance_jobs_keep_month_days_from_the_end_and_lower_case_days() -> None:
    jobs = {d.names[1]: d for d in read_terraform(ACCEPTANCE, {}, None).documents[1:]}
    complete = jobs["acctest-190707-job-complete"]
    # month_days [-11, -1, 1, 11]: the 1st, the 11th, the 11th-last and the last day.
    assert upcoming(complete, 8) == walk(
        AT_START,
        lambda t: at_start_time(t) and t.day in {1, 11, days_in(t) - 10, days_in(t)},
        8,
    )
    occurrences = jobs["acctest-190707-job-occurrences"]
    days = occurrences.body["properties"]["recurrence"]["schedule"]["monthlyOccurrences"]
    assert {d["day"] for d in days} == {"Sunday"}  # written "sunday" in the configuration
    assert upcoming(occurrences, 6) == walk(
        AT_START,
        lambda t: (
            t.weekday() == 6
            and at_start_time(t)
            and (t.day <= 7 or 15 <= t.day <= 21 or last_sunday(t))
        ),
        6,
    )
    assert (
        "authentication_active_directory.0.secret="
        in jobs["acctest-190707-job-auth_ad"].secret_hint
    )
    queue_error = jobs["acctest-190707-job-queue_error"]
    assert queue_error.body["properties"]["action"]["errorAction"]["type"] == "StorageQueue"
    assert "error_action_storage_queue.0.sas_token=" in queue_error.secret_hint


def days_in(t: datetime) -> int:
    return calendar.monthrange(t.year, t.month)[1]
