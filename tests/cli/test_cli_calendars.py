"""`horarium calendars list|show|put|delete` against a real service."""

from __future__ import annotations

import json
from pathlib import Path

from tests.api.api_client import Api, http_job
from tests.cli.cli_runner import Cli, one_line_error, rows

WEEKDAYS_AT_NINE = {
    "frequency": "Day",
    "timeZone": "America/New_York",
    "excludeCalendars": ["Business"],
}


def _calendar(api: Api, collection: str, name: str) -> str:
    return api.collection(collection) + f"/calendars/{name}"


def test_put_from_properties_then_from_the_resource_creates_then_replaces(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    collection = api.new_collection()
    (tmp_path / "Business.json").write_text(
        json.dumps({"weekends": True, "dates": ["2031-12-25", "2031-01-01"]})
    )
    first = cli("calendars", "put", "Business.json", "--resource-group", "rg1",
                "--collection", collection)  # fmt: skip
    assert first.exit_code == 0, first.output
    assert first.stderr.strip() == (
        f"Created the calendar rg1/{collection}/Business (excludes weekends, 2 dates)."
    )
    stored = api.get(_calendar(api, collection, "Business")).json()
    assert stored["properties"] == {"dates": ["2031-01-01", "2031-12-25"], "weekends": True}

    resource = {"properties": {"holidays": {"country": "us", "subdivision": "NY"}}}
    again = cli(
        "calendars", "put", "-", "--calendar", "business", "--json",
        input=json.dumps(resource), HORARIUM_RESOURCE_GROUP="rg1", HORARIUM_COLLECTION=collection,
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == api.get(_calendar(api, collection, "Business")).json()
    assert json.loads(again.stdout)["properties"] == {
        "holidays": {"country": "US", "subdivision": "NY"}
    }


def test_list_and_show_say_what_each_excludes_and_which_jobs_list_it(cli: Cli, api: Api) -> None:
    collection = api.new_collection()
    env = {"HORARIUM_RESOURCE_GROUP": "rg1", "HORARIUM_COLLECTION": collection}
    business = {
        "weekends": True,
        "holidays": {"country": "US", "subdivision": "NY"},
        "ranges": [{"start": "2031-07-01T12:00:00", "end": "2031-07-01T18:00:00"}],
    }
    for name, properties in (("Business", business), ("spare", {"dates": ["2031-05-01"]})):
        response = api.put(_calendar(api, collection, name), {"properties": properties})
        assert response.status_code == 201, response.text
    for job in ("nightly", "report"):
        response = api.put(api.job(collection, job), http_job(recurrence=WEEKDAYS_AT_NINE))
        assert response.status_code == 201, response.text

    listed = cli("calendars", "list", **env)
    assert listed.exit_code == 0, listed.output
    assert rows(listed.stdout) == [
        ["NAME", "EXCLUDES", "USED BY"],
        ["Business", "weekends, holidays US/NY, 1 range", "nightly, report"],
        ["spare", "1 date", "-"],
    ]
    as_json = cli.json("calendars", "list", **env)
    assert as_json == api.get(api.collection(collection) + "/calendars").json()

    shown = cli("calendars", "show", "business", **env)
    assert shown.exit_code == 0, shown.output
    assert rows(shown.stdout)[:7] == [
        ["name", "Business"],
        ["excludes", "weekends, holidays US/NY, 1 range"],
        ["weekends", "yes"],
        ["holidays", "US/NY"],
        ["dates", "-"],
        ["ranges", "2031-07-01T12:00:00 to 2031-07-01T18:00:00"],
        ["ical", "-"],
    ]
    assert ["used by", "nightly, report"] in rows(shown.stdout)
    body = cli.json("calendars", "show", "--calendar", "Business", **env)
    assert body == api.get(_calendar(api, collection, "Business")).json()


def test_delete_removes_a_calendar_and_the_apis_refusal_is_one_line(cli: Cli, api: Api) -> None:
    collection = api.new_collection()
    env = {"HORARIUM_RESOURCE_GROUP": "rg1", "HORARIUM_COLLECTION": collection}
    for name in ("Business", "spare"):
        api.put(_calendar(api, collection, name), {"properties": {"weekends": True}})
    api.put(api.job(collection, "nightly"), http_job(recurrence=WEEKDAYS_AT_NINE))

    refused = cli("calendars", "delete", "Business", "--yes", **env)
    assert refused.exit_code != 0
    line = one_line_error(refused)
    assert "CalendarInUse" in line and "'nightly'" in line
    assert api.get(_calendar(api, collection, "Business")).status_code == 200

    deleted = cli("calendars", "delete", "spare", "--yes", **env)
    assert deleted.exit_code == 0, deleted.output
    assert deleted.stderr.strip() == f"Deleted the calendar rg1/{collection}/spare."
    assert api.get(_calendar(api, collection, "spare")).status_code == 404

    missing = cli("calendars", "show", "spare", **env)
    assert missing.exit_code != 0
    assert "was not found" in one_line_error(missing)


def test_an_invalid_calendar_and_a_missing_name_are_one_line_errors(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    collection = api.new_collection()
    env = {"HORARIUM_RESOURCE_GROUP": "rg1", "HORARIUM_COLLECTION": collection}
    (tmp_path / "bad.json").write_text(json.dumps({"dates": ["2031-02-30"]}))
    bad = cli("calendars", "put", "bad.json", **env)
    assert bad.exit_code != 0
    assert "properties.dates[0]:" in one_line_error(bad)
    assert api.get(_calendar(api, collection, "bad")).status_code == 404

    unnamed = cli("calendars", "put", "-", input='{"weekends": true}', **env)
    assert unnamed.exit_code != 0
    assert "--calendar NAME" in one_line_error(unnamed)
    nameless = cli("calendars", "show", **env)
    assert "CALENDAR or --calendar NAME" in one_line_error(nameless)
    empty = cli("calendars", "list", **env)
    assert empty.exit_code == 0
    assert empty.stderr.strip() == f"No calendars in the collection rg1/{collection}."
