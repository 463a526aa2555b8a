"""`horarium jobs list|show|put|run|enable|disable|delete|history|upcoming` against a real
service."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.api.api_client import Api, add_history, http_job
from tests.cli.cli_runner import Cli, one_line_error, rows
from tests.http_receiver import Receiver
from tests.server_process import ServerProcess
from tests.support import hour_with_room, wait_until

PING = {
    "properties": {
        "action": {
            "type": "Http",
            "request": {"uri": "http://127.0.0.1:9/ping", "method": "POST"},
            "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:00:30", "retryCount": 2},
        },
        "recurrence": {"frequency": "Minute", "interval": 5},
    }
}


@pytest.fixture
def collection(api: Api, cli: Cli) -> str:
    """A collection, named once for every command (as a shell would: HORARIUM_*)."""
    name = api.new_collection()
    cli.env |= {"HORARIUM_RESOURCE_GROUP": "rg1", "HORARIUM_COLLECTION": name}
    return name


def test_put_creates_a_job_named_after_its_file(
    cli: Cli, api: Api, collection: str, tmp_path: Path
) -> None:
    (tmp_path / "ping.json").write_text(json.dumps(PING))
    result = cli("jobs", "put", "ping.json")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"Created the job rg1/{collection}/ping (Enabled, next run ")
    body = api.get(api.job(collection, "ping")).json()
    assert body["properties"]["action"]["retryPolicy"]["retryCount"] == 2

    again = cli("jobs", "put", "ping.json")
    assert again.exit_code == 0, again.output
    assert again.stderr.startswith(f"Replaced the job rg1/{collection}/ping")


def test_put_reads_stdin_and_json_prints_the_apis_answer(
    cli: Cli, api: Api, collection: str
) -> None:
    result = cli("jobs", "put", "-", "--job", "from-stdin", "--json", input=json.dumps(PING))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == api.get(api.job(collection, "from-stdin")).json()


def test_put_takes_the_name_inside_a_job_read_back(cli: Cli, api: Api, collection: str) -> None:
    read_back = {"name": f"{collection}/inside", **PING}
    result = cli("jobs", "put", "-", input=json.dumps(read_back))
    assert result.exit_code == 0, result.output
    assert api.get(api.job(collection, "inside")).status_code == 200


def test_a_job_the_api_refuses_is_exit_1_with_its_error_in_one_line(
    cli: Cli, collection: str
) -> None:
    bad = {"properties": {"action": {"type": "Http", "request": {"method": "GET"}}}}
    result = cli("jobs", "put", "-", "--job", "bad", input=json.dumps(bad))
    assert result.exit_code == 1
    line = one_line_error(result)
    assert line.startswith("Error: BadRequest: properties.action.request.uri")


def test_list_shows_state_runs_and_counts_in_aligned_columns(
    cli: Cli, api: Api, collection: str
) -> None:
    api.put(api.job(collection, "a-enabled"), PING)
    api.put(api.job(collection, "b-disabled"), http_job(state="Disabled"))
    result = cli("jobs", "list")
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert table[0] == [
        "NAME",
        "STATE",
        "SCHEDULE",
        "NEXT RUN",
        "LAST RUN",
        "EXECUTIONS",
        "FAILURES",
        "FAULTED",
    ]
    next_run = api.get(api.job(collection, "a-enabled")).json()["properties"]["status"][
        "nextExecutionTime"
    ]
    every = table[1].pop(2)
    assert every.startswith("every 5 minutes from ") and every.endswith(" UTC"), every
    assert table[1] == ["a-enabled", "Enabled", _to_second(next_run), "-", "0", "0", "0"]
    assert table[2] == ["b-disabled", "Disabled", "once, at once", "-", "-", "-", "-", "-"]
    lines = result.stdout.splitlines()
    state_at = lines[0].index("STATE")
    assert {line[state_at:].split()[0] for line in lines[1:]} == {"Enabled", "Disabled"}
    faulted_end = len(lines[0])
    assert all(len(line) == faulted_end for line in lines[1:])  # numbers aligned right

    only = cli("jobs", "list", "--state", "disabled")
    assert [row[0] for row in rows(only.stdout)[1:]] == ["b-disabled"]


def _to_second(instant: str) -> str:
    return instant.split(".")[0].removesuffix("Z") + "Z"


def test_list_json_is_the_apis_list(cli: Cli, api: Api, collection: str) -> None:
    api.put(api.job(collection, "j1"), PING)
    assert cli.json("jobs", "list") == api.get(api.collection(collection) + "/jobs").json()


def test_an_empty_list_or_upcoming_says_so_on_stderr(cli: Cli, api: Api, collection: str) -> None:
    none = cli("jobs", "list", "--state", "Faulted")
    assert none.exit_code == 0, none.output
    assert none.stdout == ""
    assert none.stderr.strip() == f"No Faulted jobs in the collection rg1/{collection}."

    ended = {"frequency": "Day", "endTime": "2000-01-02T00:00:00Z"}
    job = http_job(startTime="2000-01-01T00:00:00Z", recurrence=ended)
    assert api.put(api.job(collection, "ended"), job).status_code in (200, 201)
    idle = cli("jobs", "upcoming", "ended")
    assert idle.exit_code == 0, idle.output
    assert idle.stdout == ""
    assert idle.stderr.strip() == f"The job rg1/{collection}/ended has no upcoming executions."


def test_show_describes_the_job_and_json_is_the_apis(cli: Cli, api: Api, collection: str) -> None:
    api.put(api.job(collection, "ping"), PING)
    result = cli("jobs", "show", "ping")
    assert result.exit_code == 0, result.output
    shown = dict(tuple(row) for row in rows(result.stdout))  # type: ignore[misc]
    assert shown["name"] == f"{collection}/ping"
    assert shown["state"] == "Enabled"
    assert shown["action"] == "Http POST http://127.0.0.1:9/ping"
    assert shown["retry"] == "fixed, every 00:00:30, 2 retries"
    assert shown["schedule"].startswith("every 5 minutes from "), shown["schedule"]
    assert cli.json("jobs", "show", "--job", "ping") == api.get(api.job(collection, "ping")).json()

    backoff = {"retryType": "Exponential", "retryInterval": "PT20S", "maxRetryInterval": "PT1H"}
    api.patch(api.job(collection, "ping"), {"properties": {"action": {"retryPolicy": backoff}}})
    shown = dict(tuple(row) for row in rows(cli("jobs", "show", "ping").stdout))  # type: ignore[misc]
    assert shown["retry"] == "exponential, from 00:00:20 doubling up to 01:00:00, 2 retries"


def test_disable_and_enable_patch_the_state(cli: Cli, api: Api, collection: str) -> None:
    api.put(api.job(collection, "ping"), PING)
    result = cli("jobs", "disable", "ping")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"The job rg1/{collection}/ping is Disabled."
    assert api.get(api.job(collection, "ping")).json()["properties"]["state"] == "disabled"
    enabled = cli.json("jobs", "enable", "ping")
    assert enabled["properties"]["state"] == "enabled"
    assert api.get(api.job(collection, "ping")).json() == enabled


def test_delete_removes_the_job(cli: Cli, api: Api, collection: str) -> None:
    api.put(api.job(collection, "ping"), PING)
    result = cli("jobs", "delete", "ping", "--yes")
    assert result.exit_code == 0, result.output
    assert api.get(api.job(collection, "ping")).status_code == 404


def test_delete_asks_first_and_deletes_nothing_unless_told_yes(
    cli: Cli, api: Api, collection: str
) -> None:
    api.put(api.job(collection, "ping"), PING)
    for answer in ("n\n", None):  # declined; no answer at all (a script without --yes)
        kept = cli("jobs", "delete", "ping", input=answer)
        assert kept.exit_code == 1
        assert f"Delete the job rg1/{collection}/ping and its history? [y/N]" in kept.stderr
        assert kept.stderr.strip().splitlines()[-1] == (
            "Error: nothing was deleted: answer y to the question, or pass --yes"
        )
        assert api.get(api.job(collection, "ping")).status_code == 200
    deleted = cli("jobs", "delete", "ping", input="y\n")
    assert deleted.exit_code == 0, deleted.output
    assert api.get(api.job(collection, "ping")).status_code == 404


def test_a_job_named_twice_differently_is_a_usage_error(cli: Cli, collection: str) -> None:
    result = cli("jobs", "show", "one", "--job", "other")
    assert result.exit_code == 2
    assert "two job names" in one_line_error(result)


def test_run_runs_the_job_now_and_its_history_shows_it(
    engine_cli: Cli, engine_server: ServerProcess, receiver: Receiver, subscription: str
) -> None:
    api = Api(engine_server, subscription)
    name = api.new_collection()
    target = f"{receiver.base_url}/run-{subscription}"
    job = {
        "properties": {
            "startTime": "2099-01-01T00:00:00Z",  # its one execution is far off: only run runs it
            "action": {"type": "Http", "request": {"uri": target, "method": "POST"}},
        }
    }
    api.put(api.job(name, "once"), job)
    names = ("--resource-group", "rg1", "--collection", name)

    result = engine_cli("jobs", "run", "once", *names)
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"Asked the job rg1/{name}/once to run now."
    wait_until(lambda: receiver.requests_to(f"/run-{subscription}"), "the job's request")

    def history_rows() -> list[list[str]]:
        shown = engine_cli("jobs", "history", "once", *names, COLUMNS="200")
        return rows(shown.stdout)[1:]

    entry = wait_until(history_rows, "the history entry")[0]
    assert entry[1:4] == ["MainAction", "Completed", "0"]
    assert entry[4].startswith("Http Action - Response from host '127.0.0.1': 'OK'")


def test_run_of_a_disabled_job_is_the_apis_refusal(cli: Cli, api: Api, collection: str) -> None:
    api.put(api.job(collection, "off"), http_job(state="Disabled"))
    result = cli("jobs", "run", "off")
    assert result.exit_code == 1
    assert one_line_error(result).startswith("Error: JobStateConflict: Job 'off' is Disabled")


T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def _history(count: int) -> list[dict[str, Any]]:
    entries = []
    for i in range(count):
        start = T0 + timedelta(minutes=i)
        entries.append(
            {
                "expected_execution_time": start,
                "start_time": start,
                "end_time": start + timedelta(seconds=1),
                "action_name": "MainAction",
                "status": "Failed" if i % 2 else "Completed",
                "retry_count": i % 3,
                "repeat_count": i + 1,
                "message": f"entry {i}:\r\n" + "x" * 300,
            }
        )
    return entries


@pytest.fixture
def with_history(cli_server: ServerProcess, api: Api, collection: str) -> str:
    """A job with 5 history entries (minutes 0..4, odd ones Failed); returns its name."""
    job = f"h-{api.subscription}"
    api.put(api.job(collection, job), http_job())
    add_history(cli_server, job, _history(5))
    return job


def test_history_is_a_table_newest_first_with_messages_cut(cli: Cli, with_history: str) -> None:
    result = cli("jobs", "history", with_history, COLUMNS="100")
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert table[0] == ["TIME", "ACTION", "STATUS", "RETRY", "MESSAGE"]
    assert [row[0] for row in table[1:]] == [f"2024-05-01T12:0{i}:00Z" for i in (4, 3, 2, 1, 0)]
    assert table[1][1:4] == ["MainAction", "Completed", "1"]
    assert table[2][1:4] == ["MainAction", "Failed", "0"]
    assert table[1][4].startswith("entry 4: xxx")  # one line: the line break is a space
    assert table[1][4].endswith("…")
    assert all(len(line) <= 100 for line in result.stdout.splitlines())


def test_history_filters_by_status(cli: Cli, api: Api, with_history: str) -> None:
    failed = cli("jobs", "history", with_history, "--status", "failed")
    assert [row[2] for row in rows(failed.stdout)[1:]] == ["Failed", "Failed"]
    as_json = cli.json("jobs", "history", with_history, "--status", "Failed")
    assert [e["properties"]["status"] for e in as_json["value"]] == ["Failed", "Failed"]


def test_history_top_shows_a_page_and_all_follows_next_link(
    cli: Cli, api: Api, collection: str, with_history: str
) -> None:
    page = cli("jobs", "history", with_history, "--top", "2")
    assert len(rows(page.stdout)) == 1 + 2
    assert "More entries follow: --all, or --skip 2." in page.stderr
    second = cli("jobs", "history", with_history, "--top", "2", "--skip", "2")
    assert [row[0][14:16] for row in rows(second.stdout)[1:]] == ["02", "01"]

    every = cli("jobs", "history", with_history, "--top", "2", "--all")
    assert len(rows(every.stdout)) == 1 + 5
    assert "More entries" not in every.stderr
    as_json = cli.json("jobs", "history", with_history, "--top", "2", "--all")
    whole = api.get(api.job(collection, with_history) + "/history").json()
    assert as_json == whole
    one_page = cli.json("jobs", "history", with_history, "--top", "2")
    assert len(one_page["value"]) == 2 and one_page["nextLink"]


def test_upcoming_lists_the_next_executions(cli: Cli, api: Api, collection: str) -> None:
    job = {
        "properties": {
            "startTime": "2099-03-07T02:30:00",
            "action": PING["properties"]["action"],
            "recurrence": {"frequency": "Day", "timeZone": "America/New_York"},
        }
    }
    api.put(api.job(collection, "daily"), job)
    result = cli("jobs", "upcoming", "daily", "--count", "3")
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert table[0] == ["EXECUTION (UTC)", "LOCAL TIME", "ZONE", "REPEAT", "NOTE"]
    assert table[1] == [
        "2099-03-07T07:30:00Z",
        "2099-03-07T02:30:00-05:00",
        "America/New_York",
        "1",
    ]
    # 2099-03-08 is the spring-forward day in New York: 02:30 does not exist.
    assert table[2] == [
        "2099-03-08T07:30:00Z",
        "2099-03-08T03:30:00-04:00",
        "America/New_York",
        "2",
        "moved: 02:30:00 does not exist",
    ]
    as_json = cli.json("jobs", "upcoming", "daily", "--count", "3")
    path = api.job(collection, "daily") + "/upcoming"
    assert as_json == api.get(path, params={"count": 3}).json()


def test_upcoming_marks_the_times_a_calendar_skips_and_counts_executions_only(
    cli: Cli, api: Api, collection: str
) -> None:
    closed = api.collection(collection) + "/calendars/closed"
    assert api.put(closed, {"properties": {"dates": ["2031-01-04"]}}).status_code == 201
    job = http_job(
        startTime="2031-01-03T09:00:00",
        recurrence={"frequency": "Day", "timeZone": "UTC", "excludeCalendars": ["closed"]},
    )
    assert api.put(api.job(collection, "daily"), job).status_code == 201
    table = rows(cli("jobs", "upcoming", "daily", "--count", "3", COLUMNS="200").stdout)
    assert table[1:] == [
        ["2031-01-03T09:00:00Z", "2031-01-03T09:00:00+00:00", "UTC", "1"],
        [
            "2031-01-04T09:00:00Z",
            "2031-01-04T09:00:00+00:00",
            "UTC",
            "-",
            "skipped: calendar closed excludes it",
        ],
        ["2031-01-05T09:00:00Z", "2031-01-05T09:00:00+00:00", "UTC", "2"],
        ["2031-01-06T09:00:00Z", "2031-01-06T09:00:00+00:00", "UTC", "3"],
    ]


def test_history_shows_and_filters_skipped_executions(
    cli_server: ServerProcess, cli: Cli, api: Api, collection: str
) -> None:
    job = f"s-{api.subscription}"
    api.put(api.job(collection, job), http_job())
    skipped = (
        "Skipped: the execution expected at 2024-05-01T12:01:00Z fell due while the job's"
        " previous execution (expected at 2024-05-01T12:00:00Z) was unfinished;"
        " the job's executionPolicy.overlap is Skip."
    )
    entries = _history(3)
    entries[1] |= {"status": "Skipped", "retry_count": 0, "message": skipped}
    entries[1]["end_time"] = entries[1]["start_time"]
    add_history(cli_server, job, entries)

    every = rows(cli("jobs", "history", job, COLUMNS="300").stdout)
    assert [row[2] for row in every[1:]] == ["Completed", "Skipped", "Completed"]
    result = cli("jobs", "history", job, "--status", "skipped", COLUMNS="300")
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert [row[1:4] for row in table[1:]] == [["MainAction", "Skipped", "0"]]
    assert table[1][4] == skipped
    as_json = cli.json("jobs", "history", job, "--status", "Skipped")
    assert [e["properties"]["status"] for e in as_json["value"]] == ["Skipped"]
    none = cli("jobs", "history", job, "--status", "Postponed")
    assert none.exit_code == 0
    assert f"No Postponed history entries for the job rg1/{collection}/{job}." in none.stderr


def test_show_and_upcoming_name_the_execution_policy_and_what_happens_to_overdue_runs(
    cli_server: ServerProcess, cli: Cli, api: Api, collection: str
) -> None:
    from tests.ui.ui_support import job_id, update_job

    body = {
        "properties": {
            "startTime": "2024-01-01T00:00:00Z",
            "action": PING["properties"]["action"],
            "recurrence": {"frequency": "Hour"},
            "executionPolicy": {
                "overlap": "BufferOne",
                "missed": "RunAll",
                "catchUpWindow": "PT3H",
            },
        }
    }
    api.put(api.job(collection, "catchup"), body)
    shown = dict(tuple(row) for row in rows(cli("jobs", "show", "catchup").stdout))  # type: ignore[misc]
    assert (
        shown["execution policy"] == "overlap BufferOne, missed RunAll (catch-up window 03:00:00)"
    )
    api.put(api.job(collection, "ping"), PING)
    plain = dict(tuple(row) for row in rows(cli("jobs", "show", "ping").stdout))  # type: ignore[misc]
    assert "execution policy" not in plain

    # Set a day ago, its execution of five hours ago has not run (this server runs no engine).
    hour = hour_with_room()
    update_job(
        cli_server,
        job_id(cli_server, collection, "catchup"),
        schedule_set_at=hour - timedelta(days=1),
        next_execution_at=hour - timedelta(hours=5),
        next_repeat=19,
    )
    result = cli("jobs", "upcoming", "catchup", "--count", "7", COLUMNS="200")
    assert result.exit_code == 0, result.output
    table = rows(result.stdout)
    assert table[0] == [
        "EXECUTION (UTC)",
        "LOCAL TIME",
        "ZONE",
        "REPEAT",
        "IF MISSED",
        "NOTE",
    ]
    fates = [row[4] if len(row) > 4 else "" for row in table[1:]]
    assert fates == [*["Postponed"] * 3, *["Runs"] * 3, ""]
    assert result.stderr.strip() == (
        "Execution policy: overlap BufferOne, missed RunAll (catch-up window 03:00:00)."
    )
    as_json = cli.json("jobs", "upcoming", "catchup", "--count", "7")
    path = api.job(collection, "catchup") + "/upcoming"
    assert as_json == api.get(path, params={"count": 7}).json()
    assert as_json["executionPolicy"]["overlap"] == "BufferOne"
