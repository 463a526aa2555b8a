"""`horarium collections list|show|put|delete|enable|disable` against a real service."""

from __future__ import annotations

import json
from pathlib import Path

from tests.api.api_client import Api, http_job
from tests.cli.cli_runner import Cli, one_line_error, rows


def test_put_creates_a_collection_from_sku_and_location(cli: Cli, api: Api) -> None:
    result = cli(
        "collections",
        "put",
        "jc1",
        "--resource-group",
        "rg1",
        "--sku",
        "standard",
        "--location",
        "westus",
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == "Created the collection rg1/jc1 (Standard, Enabled)."
    body = api.get(api.collection("jc1")).json()
    assert body["location"] == "West US"
    assert body["properties"] == {"sku": {"name": "Standard"}, "state": "Enabled"}


def test_put_from_a_json_file_creates_then_replaces(cli: Cli, api: Api, tmp_path: Path) -> None:
    document = {
        "location": "northeurope",
        "tags": {"team": "billing"},
        "properties": {"sku": {"name": "P20Premium"}, "quota": {"maxJobCount": 10}},
    }
    (tmp_path / "jc.json").write_text(json.dumps(document))
    args = ("collections", "put", "--resource-group", "rg1", "--collection", "jc2")
    first = cli(*args, "--file", "jc.json")
    assert first.exit_code == 0, first.output
    assert "Created the collection rg1/jc2" in first.stderr
    again = cli(*args, "--file", "-", "--json", input=json.dumps(document))
    assert again.exit_code == 0, again.output
    assert "Replaced" not in again.stderr  # --json: the API's answer only
    assert json.loads(again.stdout) == api.get(api.collection("jc2")).json()
    assert json.loads(again.stdout)["tags"] == {"team": "billing"}
    assert json.loads(again.stdout)["properties"]["quota"] == {"maxJobCount": 10}


def test_list_is_a_table_of_the_subscription_or_one_group(cli: Cli, api: Api) -> None:
    api.put(api.collection("alpha", "rg1"), {"properties": {"sku": {"name": "Free"}}})
    api.put(
        api.collection("beta", "rg2"),
        {"location": "westus", "properties": {"sku": {"name": "Standard"}, "state": "Disabled"}},
    )
    result = cli("collections", "list")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert rows(result.stdout) == [
        ["NAME", "RESOURCE GROUP", "SKU", "STATE", "LOCATION"],
        ["alpha", "rg1", "Free", "Enabled", "-"],
        ["beta", "rg2", "Standard", "Disabled", "West US"],
    ]
    column = lines[0].index("STATE")
    assert [line[column:].split()[0] for line in lines[1:]] == ["Enabled", "Disabled"]
    narrowed = cli("collections", "list", "--resource-group", "rg2")
    assert [row[0] for row in rows(narrowed.stdout)[1:]] == ["beta"]


def test_list_json_is_the_apis_list(cli: Cli, api: Api) -> None:
    api.new_collection()
    listed = cli.json("collections", "list")
    path = f"/subscriptions/{api.subscription}/providers/Microsoft.Scheduler/jobCollections"
    assert listed == api.get(path).json()


def test_an_empty_list_says_so_on_stderr(cli: Cli) -> None:
    result = cli("collections", "list")
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "No job collections" in result.stderr


def test_show_prints_the_collection_and_json_is_the_apis(cli: Cli, api: Api) -> None:
    api.put(
        api.collection("jc"),
        {
            "location": "westus",
            "tags": {"a": "b"},
            "properties": {
                "sku": {"name": "Standard"},
                "quota": {"maxJobCount": 7, "maxRecurrence": {"frequency": "Hour", "interval": 1}},
            },
        },
    )
    result = cli("collections", "show", "jc", "--resource-group", "rg1")
    assert result.exit_code == 0, result.output
    shown = dict(tuple(row) for row in rows(result.stdout))  # type: ignore[misc]
    assert shown["sku"] == "Standard"
    assert shown["location"] == "West US"
    assert shown["quota"] == "7 jobs, every 1 hour at most"
    assert shown["tags"] == "a=b"
    as_json = cli.json("collections", "show", "jc", "--resource-group", "rg1")
    assert as_json == api.get(api.collection("jc")).json()


def test_show_lists_the_notifications_without_their_secret(cli: Cli, api: Api) -> None:
    notifications = [
        {"events": ["JobFaulted", "JobRecovered"], "uri": "http://127.0.0.1:9/a", "secret": "s1"},
        {"events": ["ExecutionSkipped"], "uri": "http://127.0.0.1:9/b", "secret": "s2"},
    ]
    body = {"properties": {"sku": {"name": "Standard"}, "notifications": notifications}}
    assert api.put(api.collection("jn"), body).status_code == 201
    result = cli("collections", "show", "jn", "--resource-group", "rg1")
    assert result.exit_code == 0, result.output
    shown = dict(tuple(row) for row in rows(result.stdout))  # type: ignore[misc]
    assert shown["notifications"] == (
        "JobFaulted, JobRecovered → http://127.0.0.1:9/a; ExecutionSkipped → http://127.0.0.1:9/b"
    )
    assert "s1" not in result.stdout.split() and "s2" not in result.stdout.split()
    free = {"properties": {"sku": {"name": "Free"}}}
    assert api.put(api.collection("jn2"), free).status_code == 201
    plain = cli("collections", "show", "jn2", "--resource-group", "rg1")
    assert plain.exit_code == 0 and "notifications" not in plain.stdout


def test_disable_and_enable_change_the_collection_and_its_jobs(cli: Cli, api: Api) -> None:
    name = api.new_collection()
    api.put(api.job(name, "j1"), http_job(recurrence={"frequency": "Hour"}))
    names = ("--resource-group", "rg1", "--collection", name)

    result = cli("collections", "disable", *names)
    assert result.exit_code == 0, result.output
    assert api.get(api.collection(name)).json()["properties"]["state"] == "Disabled"
    assert api.get(api.job(name, "j1")).json()["properties"]["state"] == "disabled"

    result = cli("collections", "enable", *names)
    assert result.exit_code == 0, result.output
    assert api.get(api.collection(name)).json()["properties"]["state"] == "Enabled"
    assert api.get(api.job(name, "j1")).json()["properties"]["state"] == "enabled"


def test_delete_removes_the_collection_and_its_jobs(cli: Cli, api: Api) -> None:
    name = api.new_collection()
    api.put(api.job(name, "j1"), http_job())
    declined = cli("collections", "delete", name, "--resource-group", "rg1", input="n\n")
    assert declined.exit_code == 1
    assert f"Delete the collection rg1/{name}, its jobs and their history? [y/N]" in (
        declined.stderr
    )
    assert api.get(api.job(name, "j1")).status_code == 200
    result = cli("collections", "delete", name, "--resource-group", "rg1", "--yes")
    assert result.exit_code == 0, result.output
    assert f"Deleted the collection rg1/{name}" in result.stderr
    assert api.get(api.collection(name)).status_code == 404
    again = cli("collections", "delete", name, "--resource-group", "rg1", "--yes")
    assert again.exit_code == 1
    assert one_line_error(again).startswith("Error: ResourceNotFound: ")


def test_put_needs_a_sku_or_a_file_but_not_both(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "jc.json").write_text("{}")
    neither = cli("collections", "put", "jc", "--resource-group", "rg1")
    assert neither.exit_code == 2
    assert "--sku" in one_line_error(neither)
    both = cli(
        "collections", "put", "jc", "--resource-group", "rg1", "--sku", "Free", "--file", "jc.json"
    )
    assert both.exit_code == 2
    assert "not both" in one_line_error(both)


def test_a_paused_collection_and_job_show_until_when_and_why(cli: Cli, api: Api) -> None:
    pause = {"until": "2090-05-06T07:08:00Z", "reason": "datacentre move"}
    body = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
    body["properties"] |= {"state": "Disabled", "pause": pause}
    assert api.put(api.collection("paused"), body).status_code == 201
    job = http_job(state="Disabled", pause={**pause, "reason": "supplier maintenance"})
    assert api.put(api.job("paused", "waits"), job).status_code == 201
    scope = ("--resource-group", "rg1", "--collection", "paused")

    shown = dict(tuple(r) for r in rows(cli("collections", "show", *scope).stdout))  # type: ignore[misc]
    assert shown["state"] == "Disabled"
    assert shown["paused until"] == "2090-05-06T07:08:00Z"
    assert shown["pause reason"] == "datacentre move"
    listed = rows(cli("collections", "list").stdout)
    assert [r[3] for r in listed if r[0] == "paused"] == [
        "Disabled, paused until 2090-05-06T07:08:00Z"
    ]

    job_shown = dict(tuple(r) for r in rows(cli("jobs", "show", *scope, "--job", "waits").stdout))  # type: ignore[misc]
    assert job_shown["pause reason"] == "supplier maintenance"
    jobs = rows(cli("jobs", "list", *scope).stdout)
    assert jobs[1][:2] == ["waits", "Disabled, paused until 2090-05-06T07:08:00Z"]
