"""`horarium import --from terraform`: `terraform show -json` output (tests/cli/corpus/terraform
and states written here) through a real `horarium serve`: the dry-run table, idempotence,
sensitive values the file does not show, the plan's refusals, and `upcoming` executions that
match what the resources define, counted out by an independent oracle."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.api.api_client import Api
from tests.cli.cli_runner import Cli, one_line_error, rows

CORPUS = Path(__file__).parent / "corpus" / "terraform"
EXAMPLES = CORPUS / "provider-examples.state.json"
GROUP = "tfex-scheduler"
COLLECTION = "example_job_collection"


def terraform(cli: Cli, source: Path, *args: str) -> Any:
    return cli("import", "--from", "terraform", str(source), *args)


def upcoming(api: Api, collection: str, job: str, count: int, group: str = "rg1") -> list[str]:
    response = api.get(api.job(collection, job, group) + "/upcoming", params={"count": count})
    assert response.status_code == 200, response.text
    return [e["executionTime"] for e in response.json()["value"]]


def minutes_where(start: datetime, count: int, wanted: Callable[[datetime], bool]) -> list[str]:
    """The first `count` minutes from `start` (UTC) that `wanted` accepts: the oracle."""
    found: list[str] = []
    minute = start
    while len(found) < count:
        if wanted(minute):
            found.append(minute.strftime("%Y-%m-%dT%H:%M:%SZ"))
        minute += timedelta(minutes=1)
    return found


def resource(kind: str, name: str, values: dict[str, Any], module: str = "") -> dict[str, Any]:
    return {
        "address": f"{module}{kind}.{name}",
        "mode": "managed",
        "type": kind,
        "name": name,
        "provider_name": "registry.terraform.io/hashicorp/azurerm",
        "values": values,
    }


def job(name: str, recurrence: dict[str, Any], **values: Any) -> dict[str, Any]:
    return {
        "name": name,
        "resource_group_name": "rg1",
        "job_collection_name": "tf",
        "action_web": [{"url": f"http://127.0.0.1:9/{name}", "method": "Post", "headers": {}}],
        "recurrence": [recurrence],
        "start_time": "2030-01-01T00:00:00Z",
        "state": "Enabled",
        **values,
    }


COLLECTION_VALUES = {
    "name": "tf",
    "resource_group_name": "rg1",
    "location": "westeurope",
    "sku": "Standard",
    "state": "Enabled",
    "quota": [],
    "tags": {"team": "ops"},
}


def state_of(*resources: dict[str, Any]) -> dict[str, Any]:
    """A state as `terraform show -json` prints it: the collection in the root module, the
    jobs in a child module."""
    collection = resource("azurerm_scheduler_job_collection", "tf", COLLECTION_VALUES)
    child = {"address": "module.jobs", "resources": list(resources)}
    return {
        "format_version": "1.0",
        "terraform_version": "1.5.7",
        "values": {"root_module": {"resources": [collection], "child_modules": [child]}},
    }


def write(tmp_path: Path, document: dict[str, Any], name: str = "show.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


# -- the provider's documented examples ---------------------------------------------------------


def test_the_provider_examples_import_with_refusals_named_and_a_second_run_changes_nothing(
    cli: Cli, api: Api
) -> None:
    dry = terraform(cli, EXAMPLES, "--dry-run")
    assert dry.exit_code == 1, dry.output
    table = rows(dry.stdout)
    assert table[0] == ["RESOURCE", "ACTION", "FIRST 3 EXECUTIONS (the job's time zone)"]
    assert [row[:2] for row in table[1:5]] == [
        [f"{GROUP}/{COLLECTION}", "create"],
        [f"{GROUP}/{COLLECTION}/tfex-web-once-now", "create"],
        [f"{GROUP}/{COLLECTION}/tfex-web-recurring-daily", "create"],
        [f"{GROUP}/{COLLECTION}/tfex-storage-once-now", "needs secret"],
    ]
    assert table[1][2] == "-"
    assert table[2][2] == "none (Disabled)"  # Completed: imported Disabled, not run again
    assert api.get(api.collection(COLLECTION, GROUP)).status_code == 404

    result = terraform(cli, EXAMPLES)
    assert result.exit_code == 1
    refused = api.put(
        api.job(COLLECTION, "direct", GROUP),
        {
            "properties": {
                "action": {
                    "type": "Https",
                    "request": {
                        "uri": "https://this.url.fails",
                        "method": "PUT",
                        "authentication": {"type": "Basic", "username": "a", "password": "b"},
                    },
                }
            }
        },
    ).json()["error"]
    assert result.stderr.splitlines() == [
        f"Error: {GROUP}/{COLLECTION}/tfex-web-recurring-daily: {refused['code']}:"
        f" {refused['message']}",
        f"Error: {GROUP}/{COLLECTION}/tfex-storage-once-now: needs"
        " properties.action.queueMessage.sasToken (the state does not show it: --set"
        " 'azurerm_scheduler_job.storage-once-now.action_storage_queue.0.sas_token=…')",
    ]
    collection = api.get(api.collection(COLLECTION, GROUP)).json()
    assert collection["location"] == "West US"
    assert collection["properties"]["sku"] == {"name": "Free"}
    assert collection["properties"]["quota"] == {
        "maxJobCount": 5,
        "maxRecurrence": {"frequency": "hour", "interval": 24},
    }
    once = api.get(api.job(COLLECTION, "tfex-web-once-now", GROUP)).json()["properties"]
    assert once["state"] == "disabled"
    assert once["action"]["request"] == {"uri": "http://this.url.fails", "method": "GET"}
    assert once["action"]["retryPolicy"] == {"retryType": "none"}

    again = terraform(cli, EXAMPLES)
    assert "collections 0 created, 0 replaced, 1 unchanged; jobs 0 created, 0 replaced," in (
        again.stdout
    )
    assert "1 unchanged; 2 failed" in again.stdout

    sas = "azurerm_scheduler_job.storage-once-now.action_storage_queue.0.sas_token=sv=2030&sig=x"
    given = terraform(cli, EXAMPLES, "--set", sas)
    assert "jobs 1 created, 0 replaced, 1 unchanged; 1 failed" in given.stdout
    queue = api.get(api.job(COLLECTION, "tfex-storage-once-now", GROUP)).json()["properties"]
    assert queue["action"]["queueMessage"] == {
        "storageAccount": "tfexstorageaccount",
        "queueName": "tfex-schedulerjob-storagequeue",
        "message": "storage message",
    }


# -- states written for these tests -------------------------------------------------------------


def schedules() -> list[dict[str, Any]]:
    every = {"interval": 1, "count": 0, "end_time": "", "week_days": [], "month_days": []}
    return [
        resource(
            "azurerm_scheduler_job",
            "daily",
            job("daily", {**every, "frequency": "day", "hours": [18, 6], "minutes": [30, 0]}),
            "module.jobs.",
        ),
        resource(
            "azurerm_scheduler_job",
            "weekly",
            job(
                "weekly",
                {
                    **every,
                    "frequency": "week",
                    "interval": 2,
                    "week_days": ["friday", "Monday"],
                    "hours": [9],
                    "minutes": [15],
                },
                retry=[{"interval": "00:01:00", "count": 2}],
            ),
            "module.jobs.",
        ),
        resource(
            "azurerm_scheduler_job",
            "occurrences",
            job(
                "occurrences",
                {
                    **every,
                    "frequency": "Month",
                    "monthly_occurrences": [
                        {"day": "Sunday", "occurrence": 1},
                        {"day": "sunday", "occurrence": -1},
                    ],
                    "hours": [7],
                    "minutes": [0],
                },
            ),
            "module.jobs.",
        ),
        resource(
            "azurerm_scheduler_job",
            "month-days",
            job(
                "month-days",
                {**every, "frequency": "month", "month_days": [15, -1], "count": 5},
                start_time="2030-01-01T10:20:00+01:00",
                error_action_web=[{"url": "https://127.0.0.1:9/e", "method": "post"}],
            ),
            "module.jobs.",
        ),
    ]


def test_schedules_run_as_the_state_defines(cli: Cli, api: Api, tmp_path: Path) -> None:
    source = write(tmp_path, state_of(*schedules()))
    result = terraform(cli, source)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Imported the Terraform state {source} into {api.subscription}: collections 1 created,"
        " 0 replaced, 0 unchanged; jobs 4 created, 0 replaced, 0 unchanged; 0 failed."
    )
    collection = api.get(api.collection("tf")).json()
    assert collection["tags"] == {"team": "ops"}
    start = datetime(2030, 1, 1, tzinfo=UTC)

    assert upcoming(api, "tf", "daily", 6) == minutes_where(
        start, 6, lambda m: (m.hour, m.minute) in {(6, 0), (6, 30), (18, 0), (18, 30)}
    )
    # Every other week from the week of the start (2030-01-01 is a Tuesday): Fridays and
    # Mondays of weeks 0, 2, 4 … counted from Monday 2029-12-31.
    week0 = datetime(2029, 12, 31, tzinfo=UTC)
    assert upcoming(api, "tf", "weekly", 6) == minutes_where(
        start,
        6,
        lambda m: (
            ((m - week0).days // 7) % 2 == 0
            and m.weekday() in (0, 4)
            and (m.hour, m.minute) == (9, 15)
        ),
    )
    weekly = api.get(api.job("tf", "weekly")).json()["properties"]["action"]["retryPolicy"]
    assert weekly == {"retryType": "fixed", "retryInterval": "00:01:00", "retryCount": 2}

    def first_or_last_sunday(m: datetime) -> bool:
        sunday = m.weekday() == 6
        return sunday and (m.day <= 7 or (m + timedelta(days=7)).month != m.month)

    assert upcoming(api, "tf", "occurrences", 4) == minutes_where(
        start, 4, lambda m: first_or_last_sunday(m) and (m.hour, m.minute) == (7, 0)
    )

    # No hours or minutes: those of the start time (09:20 UTC), on the 15th and the last day;
    # five executions, then the series ends.
    def fifteenth_or_last(m: datetime) -> bool:
        return m.day == 15 or (m + timedelta(days=1)).month != m.month

    month_days = upcoming(api, "tf", "month-days", 10)
    assert month_days == minutes_where(
        start, 5, lambda m: fifteenth_or_last(m) and (m.hour, m.minute) == (9, 20)
    )
    error = api.get(api.job("tf", "month-days")).json()["properties"]["action"]["errorAction"]
    assert error["type"] == "Https" and error["request"]["method"] == "POST"

    again = terraform(cli, source)
    assert "collections 0 created, 0 replaced, 1 unchanged; jobs 0 created, 0 replaced, 4" in (
        again.stdout
    )


def test_resource_group_puts_every_resource_in_one_group(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    source = write(tmp_path, state_of(*schedules()[:1]))
    result = terraform(cli, source, "--resource-group", "moved", "--dry-run")
    assert result.exit_code == 0, result.output
    assert [row[:2] for row in rows(result.stdout)[1:3]] == [
        ["moved/tf", "create"],
        ["moved/tf/daily", "create"],
    ]


def test_a_plan_reads_its_planned_values(cli: Cli, api: Api, tmp_path: Path) -> None:
    daily = schedules()[0]
    planned = {**daily, "values": {k: v for k, v in daily["values"].items() if k != "start_time"}}
    plan = {
        "format_version": "1.2",
        "planned_values": state_of(planned)["values"],
        "resource_changes": [
            {
                "address": daily["address"],
                "type": "azurerm_scheduler_job",
                "change": {"actions": ["create"], "after_unknown": {"start_time": True}},
            }
        ],
    }
    before = datetime.now(UTC)
    result = terraform(cli, write(tmp_path, plan))
    assert result.exit_code == 0, result.output
    assert "Imported the Terraform plan" in result.stdout
    # start_time known only after apply (the provider's "now"): the job runs once at creation.
    first = datetime.fromisoformat(upcoming(api, "tf", "daily", 1)[0])
    assert before <= first <= datetime.now(UTC)


def test_what_cannot_be_read_stops_before_anything_is_sent(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    raw = write(tmp_path, {"version": 4, "resources": []}, "terraform.tfstate")
    assert one_line_error(terraform(cli, raw)) == (
        f"Error: {raw}: not the output of `terraform show -json` (no 'values' or"
        " 'planned_values'); a raw .tfstate file is not read: run `terraform show -json` on it"
    )
    no_action = resource("azurerm_scheduler_job", "x", job("x", {}, action_web=[]), "module.jobs.")
    broken = write(tmp_path, state_of(no_action))
    assert one_line_error(terraform(cli, broken)) == (
        f"Error: {broken}: module.jobs.azurerm_scheduler_job.x: one of action_web or"
        " action_storage_queue"
    )
    unknown = write(tmp_path, state_of(*schedules()[:1]), "unknown.json")
    wrong = terraform(cli, unknown, "--set", "azurerm_scheduler_job.nope.x=1")
    assert one_line_error(wrong) == (
        f"Error: {unknown}: --set azurerm_scheduler_job.nope.x: no Scheduler resource has that"
        " address"
    )
    assert api.get(api.collection("tf")).status_code == 404
    assert terraform(cli, unknown, "--utc-now", "2030-01-01T00:00:00Z").exit_code == 2


# -- the provider's example configuration (examples/scheduler-jobs/main.tf) ---------------------

JOBS_EXAMPLE = CORPUS / "provider-scheduler-jobs-example.state.json"
JOBS_GROUP = "tfex-scheduler-jobs"
JOBS_COLLECTION = "tfex-scheduler-job-collection"


def sunday_at_start_time(t: datetime) -> bool:
    return t.weekday() == 6 and (t.hour, t.minute) == (14, 7)


def first_third_or_last(t: datetime) -> bool:
    last = (t + timedelta(days=7)).month != t.month
    return t.day <= 7 or 15 <= t.day <= 21 or last


def test_the_provider_example_jobs_import_and_run_as_the_configuration_defines(
    cli: Cli, api: Api
) -> None:
    result = terraform(cli, JOBS_EXAMPLE)
    assert result.exit_code == 1
    assert "collections 1 created, 0 replaced, 0 unchanged; jobs 4 created," in result.stdout
    where = f"{JOBS_GROUP}/{JOBS_COLLECTION}"
    assert result.stderr.splitlines() == [
        f"Error: {where}/tfex-web-recurring_weekly-auth_cert: needs"
        " properties.action.request.authentication.pfx (the state does not show it: --set"
        " 'azurerm_scheduler_job.web-recurring_weekly-auth_cert.action_web.0"
        ".authentication_certificate.0.pfx=…')",
        f"Error: {where}/tfex-schedulerjob-storage_queue: needs"
        " properties.action.queueMessage.sasToken (the state does not show it: --set"
        " 'azurerm_scheduler_job.storage-queue.action_storage_queue.0.sas_token=…')",
    ]

    def listed(job: str, count: int) -> list[str]:
        return upcoming(api, JOBS_COLLECTION, job, count, JOBS_GROUP)

    # The seconds of start_time (14:07:07Z) stay with schedules that do not set minutes.
    now = datetime.now(UTC)
    at_07 = now.replace(second=7, microsecond=0)
    if at_07 <= now:
        at_07 += timedelta(minutes=1)
    monthly = listed("tfex-web-recurring_monthly-auth_ad", 4)
    expected = minutes_where(at_07, 4, lambda t: sunday_at_start_time(t) and first_third_or_last(t))
    assert monthly == expected
    daily = listed("tfex-web-recurring_daily-auth_basic", 8)
    start = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    assert daily == minutes_where(
        start, 8, lambda t: t.hour in (0, 12) and t.minute in (0, 15, 30, 45)
    )

    sas = "azurerm_scheduler_job.storage-queue.action_storage_queue.0.sas_token=sv=2030&sig=x"
    given = terraform(cli, JOBS_EXAMPLE, "--set", sas)
    assert "jobs 1 created, 0 replaced, 4 unchanged; 1 failed" in given.stdout
    sundays = minutes_where(at_07, 3, sunday_at_start_time)
    assert listed("tfex-schedulerjob-storage_queue", 3) == sundays


def test_the_provider_acceptance_jobs_count_month_days_from_the_end(cli: Cli, api: Api) -> None:
    state = CORPUS / "provider-acceptance-tests.state.json"
    result = terraform(cli, state)
    assert result.exit_code == 1
    assert "collections 1 created, 0 replaced, 0 unchanged; jobs 2 created," in result.stdout
    assert len(result.stderr.splitlines()) == 2  # the AD secret and the SAS token
    now = datetime.now(UTC)
    at_07 = now.replace(second=7, microsecond=0)
    if at_07 <= now:
        at_07 += timedelta(minutes=1)

    def wanted(t: datetime) -> bool:
        last = (t.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)
        return (t.hour, t.minute) == (14, 7) and t.day in {1, 11, last.day - 10, last.day}

    listed = upcoming(
        api, "acctest-190707-job_collection", "acctest-190707-job-complete", 5, "acctestRG-190707"
    )
    assert listed == minutes_where(at_07, 5, wanted)
