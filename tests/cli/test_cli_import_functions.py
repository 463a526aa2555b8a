"""`horarium import --from functions`: Azure Functions projects and WebJobs written here (in the
layout `func init` / `func new` give them) through a real `horarium serve`: app settings from
local.settings.json and --set, the admin endpoint or --target, secrets never invented, the plan
deciding whether a timer finer than a minute may run (Seconds plan; Azure's plans answer 409),
`upcoming` against the schedule, and a Seconds-plan job that really runs every second."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tests.api.api_client import Api
from tests.cli.cli_runner import Cli, one_line_error, rows
from tests.http_receiver import Receiver
from tests.server_process import ServerProcess
from tests.support import wait_until


def functions(cli: Cli, folder: Path, collection: str, *args: str) -> Any:
    where = ("--resource-group", "rg1", "--collection", collection)
    return cli("import", "--from", "functions", str(folder), *where, *args)


def timer(schedule: str, run_on_startup: bool = False, **more: Any) -> dict[str, Any]:
    binding = {"name": "myTimer", "type": "timerTrigger", "direction": "in", "schedule": schedule}
    if run_on_startup:
        binding["runOnStartup"] = True
    return {"bindings": [binding], "scriptFile": "__init__.py", **more}


def project(tmp_path: Path, functions_json: dict[str, dict[str, Any]], **values: str) -> Path:
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "host.json").write_text(json.dumps({"version": "2.0"}))
    settings = {"IsEncrypted": False, "Values": {"FUNCTIONS_WORKER_RUNTIME": "python", **values}}
    (folder / "local.settings.json").write_text(json.dumps(settings))
    for name, document in functions_json.items():
        (folder / name).mkdir()
        (folder / name / "function.json").write_text(json.dumps(document))
    return folder


def collection(api: Api, sku: str) -> str:
    return api.new_collection(sku)


def upcoming(api: Api, name: str, job: str, count: int) -> list[datetime]:
    response = api.get(api.job(name, job) + "/upcoming", params={"count": count})
    assert response.status_code == 200, response.text
    return [datetime.fromisoformat(e["executionTime"]) for e in response.json()["value"]]


def weekday_berlin_0930(after: datetime, count: int) -> list[datetime]:
    """Mondays to Fridays at 09:30 Berlin time after `after`, day by day (the oracle)."""
    berlin = ZoneInfo("Europe/Berlin")
    day = after.astimezone(berlin).date()
    found: list[datetime] = []
    while len(found) < count:
        at = datetime(day.year, day.month, day.day, 9, 30, tzinfo=berlin)
        if day.weekday() < 5 and at >= after:
            found.append(at.astimezone(UTC))
        day += timedelta(days=1)
    return found


def sample(tmp_path: Path) -> Path:
    return project(
        tmp_path,
        {
            "Report": timer("%ReportSchedule%"),
            "Heartbeat": timer("*/10 * * * * *", run_on_startup=True),
            "Cleanup": timer("01:30:00", disabled=True),
            "Warmup": timer("0 0 */6 * * *", bindings=[{"type": "httpTrigger", "name": "req"}]),
        },
        ReportSchedule="0 30 9 * * 1-5",
        WEBSITE_TIME_ZONE="W. Europe Standard Time",
    )


def test_a_project_imports_onto_the_seconds_plan_and_runs_as_scheduled(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    folder = sample(tmp_path)
    name = collection(api, "Seconds")
    dry = functions(cli, folder, name, "--dry-run")
    assert dry.exit_code == 0, dry.output
    table = rows(dry.stdout)
    assert [row[:2] for row in table[1:]][:3] == [
        [f"rg1/{name}/Cleanup", "create"],
        [f"rg1/{name}/Heartbeat", "create"],
        [f"rg1/{name}/Report", "create"],
    ]
    assert table[1][2] == "none (Disabled)"
    assert "Warmup" not in dry.stdout  # an HTTP-triggered function has no schedule
    assert (
        f"Not carried from {folder}:\n  {folder / 'Heartbeat' / 'function.json'}: runOnStartup"
        " (the job runs on its schedule only)\n"
    ) in dry.stdout

    before = datetime.now(UTC)
    result = functions(cli, folder, name)
    assert result.exit_code == 0, result.output
    assert "jobs 3 created, 0 replaced, 0 unchanged; 0 failed" in result.stdout
    report = api.get(api.job(name, "Report")).json()["properties"]
    assert report["recurrence"] == {
        "cron": "0 30 9 * * 1-5",
        "timeZone": "W. Europe Standard Time",
    }
    assert report["action"]["request"] == {
        "uri": "http://localhost:7071/admin/functions/Report",
        "method": "POST",
        "body": '{"input": ""}',
        "headers": {"Content-Type": "application/json"},
    }
    assert upcoming(api, name, "Report", 7) == weekday_berlin_0930(before, 7)
    beats = upcoming(api, name, "Heartbeat", 4)
    assert {b - a for a, b in pairwise(beats)} == {timedelta(seconds=10)}
    assert all(t.second % 10 == 0 for t in beats)
    cleanup = api.get(api.job(name, "Cleanup")).json()["properties"]
    assert cleanup["state"] == "disabled"
    assert cleanup["recurrence"] == {
        "frequency": "minute",
        "interval": 90,
        "timeZone": "W. Europe Standard Time",
    }

    again = functions(cli, folder, name)
    assert "jobs 0 created, 0 replaced, 3 unchanged" in again.stdout


def test_on_an_azure_plan_a_timer_finer_than_a_minute_gets_the_apis_409(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    folder = sample(tmp_path)
    name = collection(api, "Standard")
    result = functions(cli, folder, name)
    assert result.exit_code == 1
    refused = api.put(
        api.job(name, "direct"),
        {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": "http://127.0.0.1:9/", "method": "POST"},
                },
                "recurrence": {"cron": "*/10 * * * * *"},
            }
        },
    ).json()["error"]
    assert refused["code"] == "RecurrenceQuotaExceeded"
    assert result.stderr.splitlines() == [
        f"Error: rg1/{name}/Heartbeat: {refused['code']}: {refused['message']}"
    ]
    assert "jobs 2 created, 0 replaced, 0 unchanged; 1 failed" in result.stdout


def test_the_cloud_host_needs_its_master_key_and_target_replaces_the_endpoint(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    folder = project(tmp_path, {"Nightly": timer("0 0 2 * * *")})
    name = collection(api, "Standard")
    host = ("--set", "WEBSITE_HOSTNAME=myapp.azurewebsites.net")
    lacking = functions(cli, folder, name, *host)
    assert lacking.exit_code == 1
    assert lacking.stderr.splitlines() == [
        f"Error: rg1/{name}/Nightly: needs properties.action.request.headers.x-functions-key"
        " (the host's master key: --set FUNCTIONS_MASTER_KEY=…)"
    ]
    given = functions(cli, folder, name, *host, "--set", "FUNCTIONS_MASTER_KEY=k3y")
    assert given.exit_code == 0, given.output
    request = api.get(api.job(name, "Nightly")).json()["properties"]["action"]["request"]
    assert request["uri"] == "https://myapp.azurewebsites.net/admin/functions/Nightly"
    assert request["headers"]["x-functions-key"] == "***"

    other = collection(api, "Standard")
    targeted = functions(cli, folder, other, "--target", "http://127.0.0.1:9/run/{name}")
    assert targeted.exit_code == 0, targeted.output
    request = api.get(api.job(other, "Nightly")).json()["properties"]["action"]["request"]
    assert request == {"uri": "http://127.0.0.1:9/run/Nightly", "method": "POST"}


def test_a_webjob_runs_through_kudu_and_what_cannot_be_read_stops_the_import(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    name = collection(api, "Standard")
    webjob = tmp_path / "site" / "App_Data" / "jobs" / "triggered" / "Sync"
    webjob.mkdir(parents=True)
    (webjob / "settings.job").write_text(json.dumps({"schedule": "0 */15 * * * *"}))
    site = tmp_path / "site"
    no_site = functions(cli, site, name)
    assert one_line_error(no_site) == (
        f"Error: {webjob / 'settings.job'}: a WebJob is run through its site's Kudu: --set"
        " WEBSITE_SITE_NAME=… or --target URL"
    )
    given = ("--set", "WEBSITE_SITE_NAME=shop", "--set", "KUDU_PASSWORD=pw")
    result = functions(cli, site, name, *given)
    assert result.exit_code == 0, result.output
    request = api.get(api.job(name, "Sync")).json()["properties"]["action"]["request"]
    assert request["uri"] == "https://shop.scm.azurewebsites.net/api/triggeredwebjobs/Sync/run"
    assert request["authentication"] == {"type": "Basic", "username": "$shop"}

    unresolved = project(tmp_path, {"Report": timer("%Missing%")})
    assert one_line_error(functions(cli, unresolved, name)) == (
        f"Error: {unresolved / 'Report' / 'function.json'}: %Missing% has no value: --set"
        " Missing=… or local.settings.json's Values"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no timer trigger" in one_line_error(functions(cli, empty, name))
    not_ours = functions(cli, site, name, "--job", "x")
    assert one_line_error(not_ours) == "Error: --job is not for --from functions"


def test_a_seconds_plan_job_runs_every_second(
    engine_cli: Cli,
    engine_server: ServerProcess,
    receiver: Receiver,
    subscription: str,
    tmp_path: Path,
) -> None:
    api = Api(engine_server, subscription)
    name = api.new_collection("Seconds")
    folder = project(tmp_path, {"Tick": timer("* * * * * *")})
    path = f"/tick-{subscription}"
    result = functions(engine_cli, folder, name, "--target", receiver.base_url + path)
    assert result.exit_code == 0, result.output
    wait_until(lambda: len(receiver.requests_to(path)) >= 2, "two ticks")
    api.delete(api.job(name, "Tick"))
    history = api.get(api.job(name, "Tick") + "/upcoming").status_code
    assert history == 404


def test_the_public_timer_templates_import_as_every_five_minutes(cli: Cli, api: Api) -> None:
    # Azure/azure-functions-templates' TimerTrigger function.json (tests/cli/corpus/functions).
    folder = Path(__file__).parent / "corpus" / "functions" / "azure-functions-templates"
    name = collection(api, "Standard")
    before = datetime.now(UTC)
    result = functions(cli, folder, name, "--target", "http://127.0.0.1:9/run/{name}")
    assert result.exit_code == 0, result.output
    assert "jobs 2 created, 0 replaced, 0 unchanged; 0 failed" in result.stdout
    after = datetime.now(UTC)

    def every_five_minutes(since: datetime) -> list[datetime]:
        first = since.replace(second=0, microsecond=0) + timedelta(minutes=1)
        while first.minute % 5:
            first += timedelta(minutes=1)
        return [first + timedelta(minutes=5 * k) for k in range(4)]

    # The service fixed each job's first run when the job reached it, between the two readings
    # (a five-minute mark may have passed in between).
    for job in ("TimerTrigger", "TimerTriggerPython"):
        listed = upcoming(api, name, job, 4)
        assert listed in (every_five_minutes(before), every_five_minutes(after))
