"""`horarium export` / `horarium import` with exclusion calendars: written with their
collection, imported before the jobs that list them, unchanged the second time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.api.api_client import Api, http_job
from tests.cli.cli_runner import Cli

CLOSURES = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:1@test\r\n"
    "DTSTART;VALUE=DATE:20310704\r\nSUMMARY:closed\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def _calendar(api: Api, name: str) -> str:
    return api.collection("billing", "rg-a") + f"/calendars/{name}"


def _define(api: Api) -> None:
    """A collection with two calendars, a job listing both and a job listing none."""

    def put(path: str, body: dict[str, Any]) -> None:
        response = api.put(path, body)
        assert response.status_code == 201, response.text

    put(api.collection("billing", "rg-a"), {"properties": {"sku": {"name": "Standard"}}})
    put(
        _calendar(api, "Business"),
        {"properties": {"weekends": True, "holidays": {"country": "US", "subdivision": "NY"}}},
    )
    put(_calendar(api, "closures"), {"properties": {"ical": CLOSURES, "dates": ["2031-12-24"]}})
    recurrence = {
        "frequency": "Day",
        "timeZone": "America/New_York",
        "excludeCalendars": ["Business", "closures"],
        "onExcluded": "NextBusinessDay",
    }
    put(
        api.job("billing", "daily", "rg-a"),
        http_job(startTime="2031-01-03T09:00:00", recurrence=recurrence),
    )
    put(api.job("billing", "plain", "rg-a"), http_job(recurrence={"frequency": "Hour"}))


def _state(api: Api) -> dict[str, Any]:
    """The collection's calendars and jobs (without their status), and the listing job's next
    executions."""
    collection = api.collection("billing", "rg-a")
    jobs = api.get(collection + "/jobs").json()["value"]
    for job in jobs:
        job["properties"].pop("status")
    upcoming = api.get(api.job("billing", "daily", "rg-a") + "/upcoming", params={"count": 8})
    return {
        "calendars": api.get(collection + "/calendars").json()["value"],
        "jobs": jobs,
        "upcoming": upcoming.json()["value"],
    }


def test_calendars_are_exported_and_imported_before_their_jobs(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    _define(api)
    before = _state(api)
    exported = cli("export", "backup")
    assert exported.exit_code == 0, exported.output
    assert exported.stdout.splitlines()[0] == (
        f"Exported 1 collection, 2 calendars and 2 jobs of the subscription {api.subscription}"
        " to backup."
    )
    folder = tmp_path / "backup/rg-a/billing"
    assert sorted(p.name for p in (folder / "calendars").iterdir()) == [
        "Business.json",
        "closures.json",
    ]
    text = (folder / "calendars/closures.json").read_text()
    assert json.loads(text) == {
        "properties": api.get(_calendar(api, "closures")).json()["properties"]
    }
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"

    assert (
        cli("collections", "delete", "billing", "--resource-group", "rg-a", "--yes").exit_code == 0
    )
    imported = cli("import", "backup")
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.strip() == (
        f"Imported backup into the subscription {api.subscription}: collections 1 created,"
        " 0 replaced, 0 unchanged; calendars 2 created, 0 replaced, 0 unchanged;"
        " jobs 2 created, 0 replaced, 0 unchanged; 0 failed."
    )
    assert _state(api) == before  # the same calendars, jobs and excluded days

    again = cli("import", "backup")
    assert again.exit_code == 0, again.output
    assert (
        "calendars 0 created, 0 replaced, 2 unchanged; jobs 0 created, 0 replaced, 2 unchanged"
        in again.stdout
    )


def test_import_replaces_a_changed_calendar_and_export_drops_a_deleted_one(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    _define(api)
    assert cli("export", "backup").exit_code == 0
    assert (
        api.put(_calendar(api, "Business"), {"properties": {"weekends": False}}).status_code == 200
    )
    assert api.put(_calendar(api, "spare"), {"properties": {}}).status_code == 201

    dry = cli("import", "backup", "--dry-run")
    assert "calendars 0 to create, 1 to replace, 1 unchanged" in dry.stdout
    assert api.get(_calendar(api, "Business")).json()["properties"] == {"weekends": False}
    result = cli("import", "backup")
    assert result.exit_code == 0, result.output
    assert "calendars 0 created, 1 replaced, 1 unchanged" in result.stdout
    assert api.get(_calendar(api, "Business")).json()["properties"]["weekends"] is True

    assert cli("export", "backup").exit_code == 0
    assert (tmp_path / "backup/rg-a/billing/calendars/spare.json").exists()
    assert api.delete(_calendar(api, "spare")).status_code == 200
    again = cli("export", "backup")
    assert "Removed 1 file of resources that no longer exist." in again.stdout
    assert not (tmp_path / "backup/rg-a/billing/calendars/spare.json").exists()
