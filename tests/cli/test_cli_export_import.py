"""`horarium export` / `horarium import`: the layout, the round trip, idempotence, another
subscription, and secrets (never exported; sent on import when a file carries them), a
collection's notification secrets too."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_client import Api, http_job
from tests.cli.cli_runner import Cli, one_line_error, rows
from tests.http_receiver import Receiver
from tests.migrated_databases import migrated_pg_database
from tests.server_process import ServerProcess, running_server
from tests.support import wait_until

EVERY_HOUR = {"frequency": "Hour", "interval": 1}


def _define(api: Api) -> None:
    """Two resource groups, three collections (one Disabled, one with quota and tags) and jobs
    of several shapes, none with secrets."""

    def put(path: str, body: dict[str, Any]) -> None:
        response = api.put(path, body)
        assert response.status_code == 201, response.text

    put(
        api.collection("billing", "rg-a"),
        {
            "location": "westus",
            "tags": {"team": "b"},
            "properties": {
                "sku": {"name": "Standard"},
                "quota": {
                    "maxJobCount": 20,
                    "maxRecurrence": {"frequency": "Minute", "interval": 5},
                },
            },
        },
    )
    put(api.collection("empty", "rg-a"), {"properties": {"sku": {"name": "Free"}}})
    put(
        api.collection("reports", "rg-b"),
        {"properties": {"sku": {"name": "P10Premium"}, "state": "Disabled"}},
    )
    put(
        api.job("billing", "nightly", "rg-a"),
        http_job(
            uri="http://127.0.0.1:9/nightly",
            startTime="2030-01-01T02:00:00Z",
            recurrence={
                "frequency": "Week",
                "schedule": {"weekDays": ["Monday", "Friday"], "hours": [2], "minutes": [0, 30]},
                "endTime": "2031-01-01T00:00:00Z",
            },
        ),
    )
    put(api.job("billing", "paused", "rg-a"), http_job(state="Disabled", recurrence=EVERY_HOUR))
    job = http_job(
        recurrence={
            "frequency": "Month",
            "count": 3,
            "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}]},
        }
    )
    job["properties"]["action"] |= {
        "retryPolicy": {"retryType": "None"},
        "errorAction": {
            "type": "Http",
            "request": {
                "uri": "http://127.0.0.1:9/err",
                "method": "PUT",
                "headers": {"x-a": "1"},
                "body": "{}",
            },
        },
    }
    put(api.job("reports", "monthly", "rg-b"), job)


def _snapshot(api: Api) -> dict[str, Any]:
    """Every collection (GET body) and job (GET body without its status) of the subscription."""
    found: dict[str, Any] = {}
    path = f"/subscriptions/{api.subscription}/providers/Microsoft.Scheduler/jobCollections"
    for collection in api.get(path).json()["value"]:
        group = collection["id"].split("/")[4]
        found[collection["id"].lower()] = collection
        jobs = api.get(api.collection(collection["name"], group) + "/jobs").json()["value"]
        for job in jobs:
            job["properties"].pop("status", None)
            found[job["id"].lower()] = job
    return found


def _delete_all(cli: Cli, api: Api) -> None:
    for key in list(_snapshot(api)):
        parts = key.split("/")
        if len(parts) == 9:  # a collection
            result = cli("collections", "delete", parts[8], "--resource-group", parts[4], "--yes")
            assert result.exit_code == 0, result.output
    assert _snapshot(api) == {}


def _moved(snapshot: dict[str, Any], source: str, target: str) -> dict[str, Any]:
    """A snapshot as it reads in another subscription (only the ids differ)."""
    text = json.dumps(snapshot).replace(f"/subscriptions/{source}/", f"/subscriptions/{target}/")
    return json.loads(text)  # type: ignore[no-any-return]


def test_export_writes_one_sorted_document_per_resource(cli: Cli, api: Api, tmp_path: Path) -> None:
    _define(api)
    result = cli("export", "out")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        f"Exported 3 collections and 3 jobs of the subscription {api.subscription} to out."
    )
    files = sorted(
        str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()
    )
    assert files == [
        "horarium-export.json",
        "rg-a/billing/collection.json",
        "rg-a/billing/jobs/nightly.json",
        "rg-a/billing/jobs/paused.json",
        "rg-a/empty/collection.json",
        "rg-b/reports/collection.json",
        "rg-b/reports/jobs/monthly.json",
    ]
    manifest = json.loads((tmp_path / "out/horarium-export.json").read_text())
    assert manifest == {"format": 1, "subscription": api.subscription}
    text = (tmp_path / "out/rg-a/billing/jobs/nightly.json").read_text()
    document = json.loads(text)
    assert text == json.dumps(document, indent=2, sort_keys=True) + "\n"
    body = api.get(api.job("billing", "nightly", "rg-a")).json()
    assert document == {
        "properties": {k: v for k, v in body["properties"].items() if k != "status"}
    }
    collection = json.loads((tmp_path / "out/rg-a/billing/collection.json").read_text())
    assert collection == {
        k: v
        for k, v in api.get(api.collection("billing", "rg-a")).json().items()
        if k not in ("id", "type", "name")
    }

    again = cli("export", "out")  # the same resources: the same bytes
    assert again.exit_code == 0
    assert (tmp_path / "out/rg-a/billing/jobs/nightly.json").read_text() == text


def test_export_delete_import_restores_the_same_definitions(cli: Cli, api: Api) -> None:
    _define(api)
    before = _snapshot(api)
    assert cli("export", "backup").exit_code == 0
    _delete_all(cli, api)

    result = cli("import", "backup")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"Imported backup into the subscription {api.subscription}: collections 3 created,"
        " 0 replaced, 0 unchanged; jobs 3 created, 0 replaced, 0 unchanged; 0 failed."
    )
    assert _snapshot(api) == before


def test_importing_twice_changes_nothing_the_second_time(cli: Cli, api: Api) -> None:
    _define(api)
    assert cli("export", "backup").exit_code == 0
    _delete_all(cli, api)
    assert cli("import", "backup").exit_code == 0
    job = api.job("billing", "nightly", "rg-a")
    first = api.get(job).json()

    again = cli("import", "backup")
    assert again.exit_code == 0, again.output
    assert (
        "collections 0 created, 0 replaced, 3 unchanged; jobs 0 created, 0 replaced,"
        " 3 unchanged; 0 failed." in again.stdout
    )
    assert api.get(job).json() == first  # the series did not start again


def test_import_replaces_what_changed_and_dry_run_sends_nothing(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    _define(api)
    assert cli("export", "backup").exit_code == 0
    api.patch(api.job("billing", "paused", "rg-a"), {"properties": {"state": "Enabled"}})
    api.delete(api.job("reports", "monthly", "rg-b"))

    dry = cli("import", "backup", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "jobs 1 to create, 1 to replace, 1 unchanged; 0 failed" in dry.stdout
    assert api.get(api.job("reports", "monthly", "rg-b")).status_code == 404

    result = cli("import", "backup")
    assert "jobs 1 created, 1 replaced, 1 unchanged; 0 failed" in result.stdout
    paused = api.get(api.job("billing", "paused", "rg-a")).json()
    assert paused["properties"]["state"] == "disabled"


def test_import_into_another_subscription(cli: Cli, api: Api, cli_server: ServerProcess) -> None:
    _define(api)
    before = _snapshot(api)
    assert cli("export", "backup").exit_code == 0
    other = Api(cli_server, f"{api.subscription}-copy")

    result = cli("import", "backup", "--subscription", other.subscription)
    assert result.exit_code == 0, result.output
    assert f"into the subscription {other.subscription}:" in result.stdout
    assert _snapshot(other) == _moved(before, api.subscription, other.subscription)
    assert _snapshot(api) == before


def test_import_disabled_starts_nothing_in_the_copy(
    cli: Cli, api: Api, cli_server: ServerProcess
) -> None:
    _define(api)
    assert cli("export", "backup").exit_code == 0
    other = Api(cli_server, f"{api.subscription}-idle")
    result = cli("import", "backup", "--subscription", other.subscription, "--disabled")
    assert result.exit_code == 0, result.output
    copied = [k for k in _snapshot(other) if len(k.split("/")) == 11]  # the jobs
    assert len(copied) == 3
    for key in copied:
        job = other.http.get(key, params={"api-version": "2016-03-01"}).json()
        assert job["properties"]["state"] == "disabled", job
    again = cli("import", "backup", "--subscription", other.subscription, "--disabled")
    assert "jobs 0 created, 0 replaced, 3 unchanged" in again.stdout, again.output
    assert api.get(api.job("billing", "nightly", "rg-a")).json()["properties"]["state"] == (
        "enabled"
    )  # the source is untouched


def test_export_scoped_to_a_group_or_a_collection(cli: Cli, api: Api, tmp_path: Path) -> None:
    _define(api)
    group = cli("export", "by-group", "--resource-group", "rg-b")
    assert group.exit_code == 0, group.output
    assert sorted(p.name for p in (tmp_path / "by-group").iterdir()) == [
        "horarium-export.json",
        "rg-b",
    ]
    one = cli("export", "one", "--resource-group", "rg-a", "--collection", "billing")
    assert one.exit_code == 0, one.output
    assert f"of {api.subscription}/rg-a/billing to one." in one.stdout
    assert sorted(p.name for p in (tmp_path / "one/rg-a").iterdir()) == ["billing"]


def test_export_again_removes_the_files_of_deleted_resources(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    _define(api)
    assert cli("export", "out").exit_code == 0
    api.delete(api.job("reports", "monthly", "rg-b"))
    api.delete(api.collection("empty", "rg-a"))
    result = cli("export", "out")
    assert result.exit_code == 0, result.output
    assert "Removed 2 files of resources that no longer exist." in result.stdout
    assert not (tmp_path / "out/rg-b/reports/jobs").exists()
    assert not (tmp_path / "out/rg-a/empty").exists()
    assert (tmp_path / "out/rg-a/billing/jobs/nightly.json").exists()


def test_export_refuses_a_folder_that_is_not_an_export(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = cli("export", "mine")
    assert result.exit_code == 2
    assert "holds no Horarium export" in one_line_error(result)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    not_export = cli("import", "mine")
    assert not_export.exit_code == 2
    assert "is not a Horarium export" in one_line_error(not_export)


def test_export_of_a_collection_needs_its_resource_group(cli: Cli) -> None:
    result = cli("export", "out", "--collection", "c")
    assert result.exit_code == 2
    assert "--collection needs --resource-group" in one_line_error(result)


def test_finished_jobs_are_not_exported_and_the_output_says_so(cli: Cli, api: Api) -> None:
    name = api.new_collection()
    api.put(
        api.job(name, "over"),
        http_job(
            startTime="2020-01-01T00:00:00Z",
            recurrence={"frequency": "Day", "endTime": "2020-02-01T00:00:00Z"},
        ),
    )
    assert api.get(api.job(name, "over")).json()["properties"]["state"] == "completed"
    result = cli("export", "out")
    assert result.exit_code == 0, result.output
    assert f"  rg1/{name}/over (Completed)" in result.stdout.splitlines()
    assert "and 0 jobs" in result.stdout


def _basic_job(uri: str, password: str) -> dict[str, Any]:
    auth = {"type": "Basic", "username": "robot", "password": password}
    return {
        "properties": {
            "startTime": "2099-01-01T00:00:00Z",  # its one execution is far off: only run runs it
            "action": {
                "type": "Http",
                "request": {"uri": uri, "method": "POST", "authentication": auth},
            },
        }
    }


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_a_basic_password_is_not_exported_and_import_sends_it_once_supplied(
    engine_cli: Cli,
    engine_server: ServerProcess,
    receiver: Receiver,
    subscription: str,
    tmp_path: Path,
) -> None:
    api = Api(engine_server, subscription)
    name = api.new_collection()
    path = f"/basic-{subscription}"
    api.put(api.job(name, "secure"), _basic_job(receiver.base_url + path, "s3cret!"))
    names = ("--resource-group", "rg1", "--collection", name)

    exported = engine_cli("export", "out")
    assert exported.exit_code == 0, exported.output
    job_file = tmp_path / "out" / "rg1" / name / "jobs" / "secure.json"
    assert "s3cret" not in job_file.read_text()
    document = json.loads(job_file.read_text())
    assert "password" not in document["properties"]["action"]["request"]["authentication"]
    assert "Secrets are not exported" in exported.stdout
    assert (
        f"  {Path('out') / 'rg1' / name / 'jobs' / 'secure.json'}:"
        " properties.action.request.authentication.password" in exported.stdout.splitlines()
    )

    unchanged = engine_cli("import", "out")  # the job still exists: nothing to send
    assert unchanged.exit_code == 0, unchanged.output
    assert "jobs 0 created, 0 replaced, 1 unchanged" in unchanged.stdout

    # Another change, without the password: replaced, and the service keeps the stored one.
    document["properties"]["action"]["request"]["headers"] = {"x-note": "1"}
    job_file.write_text(json.dumps(document))
    changed = engine_cli("import", "out")
    assert "jobs 0 created, 1 replaced, 0 unchanged; 0 failed" in changed.stdout
    assert engine_cli("jobs", "run", "secure", *names).exit_code == 0
    sent = wait_until(lambda: receiver.requests_to(path), "the job's request")
    assert sent[0]["authorization"] == _basic("robot", "s3cret!")

    # Created again (after a delete), the job needs its password in the file.
    assert (
        engine_cli("collections", "delete", name, "--resource-group", "rg1", "--yes").exit_code == 0
    )
    lacking = engine_cli("import", "out")
    assert lacking.exit_code == 1
    assert (
        f"Error: {job_file.relative_to(tmp_path)}: needs properties.action.request"
        ".authentication.password (secrets are not exported: add them to the file)"
        in lacking.stderr
    )
    assert api.get(api.job(name, "secure")).status_code == 404

    document["properties"]["action"]["request"]["authentication"]["password"] = "n3w-s3cret"
    job_file.write_text(json.dumps(document))
    supplied = engine_cli("import", "out")
    assert supplied.exit_code == 0, supplied.output
    assert "jobs 1 created" in supplied.stdout

    again = engine_cli("import", "out")
    assert "jobs 0 created, 0 replaced, 1 unchanged" in again.stdout
    assert "Secrets in the files of 1 unchanged job were not sent" in again.stdout
    resent = engine_cli("import", "out", "--resend-secrets")
    assert "jobs 0 created, 1 replaced, 0 unchanged" in resent.stdout

    # The job runs with the password the import sent.
    assert engine_cli("jobs", "run", "secure", *names).exit_code == 0
    sent = wait_until(lambda: receiver.requests_to(path)[1:], "the second request")
    assert sent[0]["authorization"] == _basic("robot", "n3w-s3cret")


def test_masked_headers_and_uri_secrets_are_named_and_compared_as_shown(
    cli: Cli, api: Api, cli_server: ServerProcess, tmp_path: Path
) -> None:
    name = api.new_collection()
    job = http_job(uri="https://127.0.0.1:9/run?code=c0de&v=2")
    job["properties"]["action"]["request"]["headers"] = {"Authorization": "Bearer t0ken"}
    api.put(api.job(name, "hook"), job)

    exported = cli("export", "out")
    job_file = tmp_path / "out" / "rg1" / name / "jobs" / "hook.json"
    request = json.loads(job_file.read_text())["properties"]["action"]["request"]
    assert request["headers"] == {"Authorization": "***"}
    assert request["uri"] == "https://127.0.0.1:9/run?code=***&v=2"
    assert (
        f"  {Path('out') / 'rg1' / name / 'jobs' / 'hook.json'}:"
        " properties.action.request.headers.Authorization,"
        " properties.action.request.uri (its *** parts)"
    ) in exported.stdout.splitlines()

    other = Api(cli_server, f"{api.subscription}-copy")
    lacking = cli("import", "out", "--subscription", other.subscription)
    assert lacking.exit_code == 1
    assert "needs properties.action.request.headers.Authorization" in lacking.stderr

    document = json.loads(job_file.read_text())
    document["properties"]["action"]["request"] |= {
        "headers": {"Authorization": "Bearer t0ken"},
        "uri": "https://127.0.0.1:9/run?code=c0de&v=2",
    }
    job_file.write_text(json.dumps(document))
    supplied = cli("import", "out", "--subscription", other.subscription)
    assert supplied.exit_code == 0, supplied.output
    assert "jobs 1 created" in supplied.stdout
    shown = other.get(other.job(name, "hook")).json()["properties"]["action"]["request"]
    assert shown == request
    again = cli("import", "out", "--subscription", other.subscription)
    assert "jobs 0 created, 0 replaced, 1 unchanged" in again.stdout


def test_channel_secrets_are_named_by_export_and_kept_by_import(
    cli: Cli, api: Api, cli_server: ServerProcess, tmp_path: Path
) -> None:
    """A slack webhook URL and a pagerduty routing key (docs/engine.md, "Channels") are not
    exported; the file as exported imports unchanged, and into another subscription once they
    are added."""
    hook = "https://hooks.example.test/services/T1/B2/s3cr3t"
    channels = [
        {"format": "slack", "events": ["JobFaulted"], "uri": hook},
        {"format": "pagerduty", "events": ["JobFaulted", "JobRecovered"], "routingKey": "rk-42"},
    ]
    name = api.new_collection(notifications=channels)
    exported = cli("export", "out")
    file = tmp_path / "out" / "rg1" / name / "collection.json"
    assert "s3cr3t" not in file.read_text() and "rk-42" not in file.read_text()
    shown_file = Path("out") / "rg1" / name / "collection.json"
    assert (
        f"  {shown_file}: properties.notifications[0].uri (its *** parts),"
        " properties.notifications[1].routingKey"
    ) in exported.stdout.splitlines(), exported.stdout
    unchanged = cli("import", "out")
    assert "collections 0 created, 0 replaced, 1 unchanged" in unchanged.stdout, unchanged.output

    other = Api(cli_server, f"{api.subscription}-channels")
    lacking = cli("import", "out", "--subscription", other.subscription)
    assert lacking.exit_code == 1
    assert "needs properties.notifications[0].uri" in lacking.stderr, lacking.stderr
    assert "properties.notifications[1].routingKey" in lacking.stderr
    document = json.loads(file.read_text())
    document["properties"]["notifications"][0]["uri"] = hook
    document["properties"]["notifications"][1]["routingKey"] = "rk-42"
    file.write_text(json.dumps(document))
    supplied = cli("import", "out", "--subscription", other.subscription)
    assert supplied.exit_code == 0, supplied.output
    shown = other.get(other.collection(name)).json()["properties"]["notifications"]
    assert shown == api.get(api.collection(name)).json()["properties"]["notifications"]
    assert shown[0]["uri"] == "https://hooks.example.test/***"


def _signed_by(secret: str, request: dict[str, Any]) -> bool:
    expected = hmac.new(secret.encode(), request["body"], hashlib.sha256).hexdigest()
    return bool(request["signature"] == f"sha256={expected}")


def test_notification_secrets_are_not_exported_and_import_sends_them_once_supplied(
    engine_cli: Cli,
    engine_server: ServerProcess,
    receiver: Receiver,
    subscription: str,
    tmp_path: Path,
) -> None:
    api = Api(engine_server, subscription)
    name = f"jc-{subscription}"
    path = f"/notify-{subscription}"
    notification = {"events": ["ExecutionFaulted"], "uri": receiver.base_url + path}
    body = {
        "location": "West US",
        "properties": {
            "sku": {"name": "Standard"},
            "notifications": [{**notification, "secret": "whsec-0ld"}],
        },
    }
    assert api.put(api.collection(name), body).status_code == 201
    job = _basic_job("http://127.0.0.1:9/refused", "pw")  # nothing listens: it faults
    job["properties"]["action"]["request"].pop("authentication")
    job["properties"]["action"]["retryPolicy"] = {"retryType": "None"}
    assert api.put(api.job(name, "broken"), job).status_code == 201
    names = ("--resource-group", "rg1", "--collection", name)

    def faulted(count: int, secret: str) -> dict[str, Any]:
        """Run the job, wait for notification number `count`, check its signature."""
        assert engine_cli("jobs", "run", "broken", *names).exit_code == 0
        sent = wait_until(lambda: receiver.requests_to(path)[count - 1 :], f"notification {count}")
        assert _signed_by(secret, sent[0]), "signed with the secret the import left or sent"
        assert json.loads(sent[0]["body"])["event"] == "ExecutionFaulted"
        return sent[0]

    exported = engine_cli("export", "out")
    assert exported.exit_code == 0, exported.output
    file = tmp_path / "out" / "rg1" / name / "collection.json"
    assert "whsec" not in file.read_text()
    document = json.loads(file.read_text())
    assert document["properties"]["notifications"] == [notification]
    assert "Secrets are not exported" in exported.stdout
    shown_file = Path("out") / "rg1" / name / "collection.json"
    assert f"  {shown_file}: properties.notifications[0].secret" in exported.stdout.splitlines()

    unchanged = engine_cli("import", "out")  # the collection still exists: nothing to send
    assert unchanged.exit_code == 0, unchanged.output
    assert "collections 0 created, 0 replaced, 1 unchanged" in unchanged.stdout

    # Another change, without the secret: replaced, and the service keeps the stored one.
    document["properties"]["notifications"][0]["events"] = ["ExecutionFaulted", "JobFaulted"]
    file.write_text(json.dumps(document))
    changed = engine_cli("import", "out")
    assert "collections 0 created, 1 replaced, 0 unchanged" in changed.stdout, changed.output
    faulted(1, "whsec-0ld")

    # Created again (after a delete), the collection needs its secret in the file; its jobs
    # are not sent either.
    assert (
        engine_cli("collections", "delete", name, "--resource-group", "rg1", "--yes").exit_code == 0
    )
    lacking = engine_cli("import", "out")
    assert lacking.exit_code == 1
    assert (
        f"Error: {shown_file}: needs properties.notifications[0].secret (secrets are not"
        " exported: add them to the file)" in lacking.stderr
    )
    assert "not sent (its collection failed)" in lacking.stderr
    assert api.get(api.collection(name)).status_code == 404
    dry = engine_cli("import", "out", "--dry-run")
    assert dry.exit_code == 1 and "needs properties.notifications[0].secret" in dry.stderr

    document["properties"]["notifications"][0]["secret"] = "whsec-n3w"
    file.write_text(json.dumps(document))
    supplied = engine_cli("import", "out")
    assert supplied.exit_code == 0, supplied.output
    assert "collections 1 created, 0 replaced, 0 unchanged; jobs 1 created" in supplied.stdout
    shown = api.get(api.collection(name)).json()["properties"]["notifications"]
    assert shown == [{"events": ["ExecutionFaulted", "JobFaulted"], "uri": notification["uri"]}]

    again = engine_cli("import", "out")
    assert "collections 0 created, 0 replaced, 1 unchanged" in again.stdout
    assert "Secrets in the files of 1 unchanged collection were not sent" in again.stdout
    resent = engine_cli("import", "out", "--resend-secrets")
    assert "collections 0 created, 1 replaced, 0 unchanged" in resent.stdout

    # The notifications are signed with the secret the import sent.
    faulted(2, "whsec-n3w")


@pytest.fixture
def pg_server(tmp_path: Path) -> Iterator[ServerProcess]:
    with migrated_pg_database() as url, running_server(tmp_path / "pg", database=url) as server:
        yield server


@pytest.mark.postgres
def test_round_trip_on_postgresql(pg_server: ServerProcess, subscription: str) -> None:
    api = Api(pg_server, subscription)
    cli = Cli(
        {
            "HORARIUM_URL": pg_server.base_url,
            "HORARIUM_TOKEN": pg_server.token or "",
            "HORARIUM_SUBSCRIPTION": subscription,
        }
    )
    _define(api)
    before = _snapshot(api)
    assert cli("export", "backup").exit_code == 0
    _delete_all(cli, api)
    assert cli("import", "backup").exit_code == 0
    assert _snapshot(api) == before
    again = cli("import", "backup")
    assert "jobs 0 created, 0 replaced, 3 unchanged; 0 failed" in again.stdout


def test_dry_run_prints_the_table_with_first_executions_less_the_calendars(
    cli: Cli, api: Api
) -> None:
    _define(api)
    calendar = api.collection("billing", "rg-a") + "/calendars/closed"
    assert api.put(calendar, {"properties": {"dates": ["2030-01-04"]}}).status_code == 201
    nightly = api.job("billing", "nightly", "rg-a")
    excluded = {"recurrence": {"excludeCalendars": ["closed"]}}
    assert api.patch(nightly, {"properties": excluded}).status_code == 200
    assert cli("export", "backup").exit_code == 0
    api.patch(api.job("billing", "paused", "rg-a"), {"properties": {"state": "Enabled"}})
    api.delete(api.job("reports", "monthly", "rg-b"))

    dry = cli("import", "backup", "--dry-run")
    assert dry.exit_code == 0, dry.output
    table = rows(dry.stdout)
    assert table[0] == ["RESOURCE", "ACTION", "FIRST 3 EXECUTIONS (the job's time zone)"]
    assert table[1:6] == [
        ["rg-a/billing", "unchanged", "-"],
        ["rg-a/billing/calendars/closed", "unchanged", "-"],
        # Mondays and Fridays at 02:00 and 02:30 from 2030-01-01, less Friday 2030-01-04.
        [
            "rg-a/billing/nightly",
            "unchanged",
            "2030-01-07 02:00 UTC, 2030-01-07 02:30 UTC, 2030-01-11 02:00 UTC",
        ],
        ["rg-a/billing/paused", "replace", "none (Disabled)"],
        ["rg-a/empty", "unchanged", "-"],
    ]
    assert [row[:2] for row in table[6:8]] == [
        ["rg-b/reports", "unchanged"],
        ["rg-b/reports/monthly", "create"],
    ]
    assert api.get(api.job("reports", "monthly", "rg-b")).status_code == 404
