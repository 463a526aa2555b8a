"""`horarium collections upcoming [--from --to --zone]` and the schedule column of `jobs list`,
against a real service."""

from __future__ import annotations

from tests.api.api_client import Api, http_job
from tests.cli.cli_runner import Cli, one_line_error, rows

# Sunday 2031-03-09 is the US spring-forward day.
WINDOW = ("--from", "2031-03-07T00:00:00Z", "--to", "2031-03-10T00:00:00Z")


def _collection(api: Api, cli: Cli) -> str:
    name = api.new_collection()
    cli.env |= {"HORARIUM_RESOURCE_GROUP": "rg1", "HORARIUM_COLLECTION": name}
    calendar = api.collection(name) + "/calendars/closed"
    assert api.put(calendar, {"properties": {"dates": ["2031-03-08"]}}).status_code == 201
    jobs = {
        "night": http_job(
            startTime="2031-03-01T02:30:00",
            recurrence={"frequency": "Day", "timeZone": "America/New_York"},
        ),
        "report": http_job(
            startTime="2031-03-01T00:00:00Z",
            recurrence={"cron": "0 9 * * *", "excludeCalendars": ["closed"]},
        ),
        "off": http_job(
            state="Disabled", startTime="2031-03-01T00:00:00Z", recurrence={"cron": "0 8 * * *"}
        ),
    }
    for job, body in jobs.items():
        assert api.put(api.job(name, job), body).status_code == 201
    return name


def test_upcoming_lists_every_job_by_time_with_its_marks(api: Api, cli: Cli) -> None:
    name = _collection(api, cli)
    result = cli("collections", "upcoming", *WINDOW)
    assert result.exit_code == 0, result.output
    assert rows(result.stdout) == [
        ["TIME", "JOB", "NOTE"],
        ["2031-03-07 07:30:00 UTC", "night"],
        ["2031-03-07 08:00:00 UTC", "off", "paused: job Disabled"],
        ["2031-03-07 09:00:00 UTC", "report"],
        ["2031-03-08 07:30:00 UTC", "night"],
        ["2031-03-08 08:00:00 UTC", "off", "paused: job Disabled"],
        ["2031-03-08 09:00:00 UTC", "report", "skipped: calendar closed excludes it"],
        ["2031-03-09 07:30:00 UTC", "night", "moved: 02:30:00 does not exist"],
        ["2031-03-09 08:00:00 UTC", "off", "paused: job Disabled"],
        ["2031-03-09 09:00:00 UTC", "report"],
    ]
    assert "times in UTC" in result.stderr

    # --zone shows the times on that clock and reads --from / --to without offset on it.
    local = cli(
        "collections", "upcoming", name,
        "--from", "2031-03-09T00:00:00", "--to", "2031-03-09T04:00:00",
        "--zone", "America/New_York",
    )  # fmt: skip
    assert local.exit_code == 0, local.output
    assert rows(local.stdout)[1:] == [  # "off" at 04:00 EDT is the window's exclusive end
        ["2031-03-09 03:30:00 EDT", "night", "moved: 02:30:00 does not exist"],
    ]
    as_json = cli.json("collections", "upcoming", *WINDOW)
    assert sorted(job["name"] for job in as_json["value"]) == ["night", "off", "report"]


def test_a_window_too_long_or_a_bad_zone_is_one_line(api: Api, cli: Cli) -> None:
    _collection(api, cli)
    long = cli("collections", "upcoming", "--from", "2031-03-01", "--to", "2031-03-09")
    assert long.exit_code == 1
    assert "longer than 7 days" in one_line_error(long)
    zone = cli("collections", "upcoming", "--zone", "Mars/Olympus")
    assert zone.exit_code == 2
    assert "'Mars/Olympus' is not an IANA time zone" in zone.output


def test_jobs_list_shows_each_schedule_in_words(api: Api, cli: Cli) -> None:
    _collection(api, cli)
    listed = {row[0]: row[2] for row in rows(cli("jobs", "list").stdout)[1:]}
    assert listed == {
        "night": "every day at 02:30 America/New_York",
        "off": "every day at 08:00 UTC",
        "report": "every day at 09:00 UTC, except closed (1 date)",
    }
