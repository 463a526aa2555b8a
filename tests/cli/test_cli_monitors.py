"""`horarium monitors put|list|show|delete|checkins` against a real service, and monitors in
`horarium export` / `import`: exported without their ping tokens (nor status), imported after
the calendars they list, unchanged the second time."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.api.api_client import Api
from tests.cli.cli_runner import Cli, one_line_error, rows

HOURLY = {"recurrence": {"frequency": "Hour", "timeZone": "Europe/Paris"}, "grace": "00:10:00"}


def _monitor(api: Api, collection: str, name: str, group: str = "rg1") -> str:
    return api.collection(collection, group) + f"/monitors/{name}"


def test_put_prints_the_ping_url_once_and_list_show_checkins_delete(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    collection = api.new_collection()
    env = {"HORARIUM_RESOURCE_GROUP": "rg1", "HORARIUM_COLLECTION": collection}
    (tmp_path / "backup-job.json").write_text(json.dumps(HOURLY))
    created = cli("monitors", "put", "backup-job.json", **env)
    assert created.exit_code == 0, created.output
    assert f"Created the monitor rg1/{collection}/backup-job (status New)." in created.stderr
    url = created.stdout.strip()
    assert url.startswith(api.server.base_url + "/ping/")
    replaced = cli("monitors", "put", "backup-job.json", **env)
    assert replaced.exit_code == 0 and replaced.stdout == ""  # the token is shown only once
    assert "Replaced the monitor" in replaced.stderr

    assert httpx.post(url + "/start", timeout=30).status_code == 200
    assert httpx.post(url, content=b"copied 3 files\nall good", timeout=30).status_code == 200
    listed = cli("monitors", "list", **env)
    assert listed.exit_code == 0, listed.output
    header, row = rows(listed.stdout)
    assert header == ["NAME", "STATUS", "LAST CHECK-IN", "NEXT EXPECTED", "EXPECTED"]
    assert row[:2] == ["backup-job", "Up"]
    assert row[4] == "every hour"  # the one describer of schedules (docs/recurrence.md §11)
    shown = dict(r[:2] for r in rows(cli("monitors", "show", "backup-job", **env).stdout))
    assert shown["status"] == "Up" and shown["grace"] == "00:10:00"
    assert "ping url" not in shown
    checkins = cli("monitors", "checkins", "backup-job", "--top", "1", **env)
    assert checkins.exit_code == 0, checkins.output
    assert rows(checkins.stdout)[1][1:] == ["Success", "-", "copied 3 files all good"]
    assert "More check-ins follow: --skip 1." in checkins.stderr
    everything = cli.json("monitors", "checkins", "backup-job", **env)["value"]
    assert [c["properties"]["kind"] for c in everything] == ["Success", "Start"]

    deleted = cli("monitors", "delete", "backup-job", "--yes", **env)
    assert deleted.exit_code == 0, deleted.output
    gone = cli("monitors", "show", "backup-job", **env)
    assert gone.exit_code != 0 and "ResourceNotFound" in one_line_error(gone)
    missing = cli("monitors", "show", **env)
    assert "name the monitor: MONITOR or --monitor NAME" in one_line_error(missing)


def test_monitors_are_exported_without_tokens_and_imported(
    cli: Cli, api: Api, tmp_path: Path
) -> None:
    collection = api.collection("ops", "rg-m")
    created = api.put(collection, {"properties": {"sku": {"name": "Standard"}}})
    assert created.status_code == 201, created.text
    calendar = api.put(collection + "/calendars/Business", {"properties": {"weekends": True}})
    assert calendar.status_code == 201, calendar.text
    listing = {"recurrence": {"cron": "0 6 * * *", "excludeCalendars": ["Business"]}}
    monitor = api.put(_monitor(api, "ops", "daily", "rg-m"), {"properties": listing})
    assert monitor.status_code == 201, monitor.text
    token = monitor.json()["properties"]["pingUrl"].rsplit("/", 1)[-1]

    exported = cli("export", "backup")
    assert exported.exit_code == 0, exported.output
    assert exported.stdout.splitlines()[0] == (
        f"Exported 1 collection, 1 calendar, 1 monitor and 0 jobs of the subscription"
        f" {api.subscription} to backup."
    )
    text = (tmp_path / "backup/rg-m/ops/monitors/daily.json").read_text()
    assert token not in text
    assert json.loads(text) == {
        "properties": {
            "grace": "00:05:00",
            "recurrence": {"cron": "0 6 * * *", "excludeCalendars": ["Business"]},
            "state": "Enabled",
        }
    }

    assert cli("collections", "delete", "ops", "--resource-group", "rg-m", "--yes").exit_code == 0
    imported = cli("import", "backup")
    assert imported.exit_code == 0, imported.output
    assert "calendars 1 created" in imported.stdout
    assert "monitors 1 created, 0 replaced, 0 unchanged; 0 failed" in imported.stdout
    again = api.get(_monitor(api, "ops", "daily", "rg-m"))
    assert again.status_code == 200
    assert again.json()["properties"]["recurrence"] == listing["recurrence"]
    assert again.json()["properties"]["status"] == "New"
    second = cli("import", "backup")
    assert "monitors 0 created, 0 replaced, 1 unchanged" in second.stdout
