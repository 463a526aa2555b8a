"""`horarium preview FILE [--now ISO] [--count N]`, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

from horarium.cli.preview import run
from tests import forkserver

DST_JOB = {
    "id": "/subscriptions/x/resourceGroups/y/providers/Microsoft.Scheduler/jobCollections/c/jobs/j",
    "name": "c/j",
    "properties": {
        "startTime": "2019-03-09T02:30:00",
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1/", "method": "GET"}},
        "recurrence": {"frequency": "Day", "timeZone": "Central Standard Time"},
    },
}


def horarium(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return forkserver.run(
        [sys.executable, "-m", "horarium.cli", "preview", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_whole_job_from_stdin_prints_utc_local_and_dst_marks() -> None:
    done = horarium("-", "--now", "2019-03-01T00:00:00Z", "--count", "3", stdin=json.dumps(DST_JOB))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "2019-03-09T08:30:00Z  2019-03-09 02:30:00 CST",
        "2019-03-10T08:30:00Z  2019-03-10 03:30:00 CDT  [DST: moved, 02:30:00 does not exist]",
        "2019-03-11T07:30:00Z  2019-03-11 02:30:00 CDT",
    ]


def test_the_schedule_in_words_goes_to_stderr_with_its_calendars(tmp_path: Path) -> None:
    """The one describer of docs/recurrence.md; stdout keeps one line per execution."""
    done = horarium("-", "--now", "2019-03-01T00:00:00Z", "--count", "1", stdin=json.dumps(DST_JOB))
    assert done.stderr.splitlines() == ["schedule: every day at 02:30 America/Chicago"]
    calendar = tmp_path / "off.json"
    calendar.write_text(json.dumps({"properties": {"weekends": True}}))
    job = {
        "recurrence": {
            "cron": "0 9 * * *",
            "timeZone": "America/New_York",
            "excludeCalendars": ["off"],
            "onExcluded": "NextBusinessDay",
        }
    }
    args = ("-", "--now", "2031-01-02T00:00:00Z", "--count", "2", "--calendar", f"off={calendar}")
    moved = horarium(*args, stdin=json.dumps(job))
    assert moved.returncode == 0, moved.stderr
    assert moved.stderr.splitlines() == [
        "schedule: every day at 09:00 America/New_York, except off (weekends);"
        " moved to the next business day"
    ]
    assert len(moved.stdout.splitlines()) >= 2


def test_properties_file_and_merged_mark(tmp_path: Path) -> None:
    path = tmp_path / "job.json"
    path.write_text(
        json.dumps(
            {
                "startTime": "2019-11-02T01:30:00",
                "recurrence": {"frequency": "day", "timeZone": "America/Chicago", "count": 2},
            }
        )
    )
    done = horarium(str(path), "--now", "2019-11-01T00:00:00Z")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "2019-11-02T06:30:00Z  2019-11-02 01:30:00 CDT",
        "2019-11-03T06:30:00Z  2019-11-03 01:30:00 CDT  [DST: merged, runs once]",
    ]


def test_count_counts_executions_and_lists_the_times_a_calendar_skips_besides(
    tmp_path: Path,
) -> None:
    calendar = tmp_path / "closed.json"
    calendar.write_text(json.dumps({"dates": ["2031-01-04"]}))
    job = {
        "startTime": "2031-01-03T09:00:00Z",
        "recurrence": {"frequency": "Day", "excludeCalendars": ["closed"]},
    }
    now = "2031-01-01T00:00:00Z"
    args = ["-", "--now", now, "--count", "3", "--calendar", f"closed={calendar}"]
    done = horarium(*args, stdin=json.dumps(job))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "2031-01-03T09:00:00Z  2031-01-03 09:00:00 UTC",
        "2031-01-04T09:00:00Z  2031-01-04 09:00:00 UTC  [calendar closed: skipped]",
        "2031-01-05T09:00:00Z  2031-01-05 09:00:00 UTC",
        "2031-01-06T09:00:00Z  2031-01-06 09:00:00 UTC",
    ]


def test_invalid_job_is_a_one_line_error_naming_the_field_exit_2() -> None:
    bad = {"recurrence": {"frequency": "Day", "schedule": {"minutes": [1, 2, 61]}}}
    done = horarium("-", stdin=json.dumps(bad))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "error: recurrence.schedule.minutes[2]: 61 is not in 0..59\n"


def test_not_json_and_bad_now_exit_2() -> None:
    err = StringIO()
    assert run("{not json", out=StringIO(), err=err) == 2
    assert err.getvalue().startswith("error: input: not JSON:")
    err = StringIO()
    assert run("{}", now="yesterday", out=StringIO(), err=err) == 2
    assert err.getvalue() == "error: --now: 'yesterday' is not an ISO 8601 date-time\n"


def test_ended_series_prints_nothing_and_says_so() -> None:
    out, err = StringIO(), StringIO()
    job = {"recurrence": {"frequency": "Day", "endTime": "2000-01-01"}}
    assert run(json.dumps(job), now="2024-01-01T00:00:00Z", out=out, err=err) == 0
    assert out.getvalue() == ""
    assert "no executions" in err.getvalue()


def test_default_now_and_count() -> None:
    out = StringIO()
    assert run(json.dumps({"recurrence": {"frequency": "Minute"}}), out=out) == 0
    assert len(out.getvalue().splitlines()) == 10


HOURLY_RUN_ALL = {
    "startTime": "2024-01-01T00:00:00Z",
    "action": {"type": "Http", "request": {"uri": "http://127.0.0.1/", "method": "GET"}},
    "recurrence": {"frequency": "Hour"},
    "executionPolicy": {"overlap": "Skip", "missed": "RunAll", "catchUpWindow": "PT2H"},
}


def test_the_execution_policy_heads_the_preview() -> None:
    done = horarium(
        "-", "--now", "2024-01-01T05:30:00Z", "--count", "2", stdin=json.dumps(HOURLY_RUN_ALL)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "# executionPolicy: overlap Skip, missed RunAll (catchUpWindow 02:00:00)",
        "2024-01-01T06:00:00Z  2024-01-01 06:00:00 UTC",
        "2024-01-01T07:00:00Z  2024-01-01 07:00:00 UTC",
    ]


def test_the_deadlines_are_in_the_execution_policy_line() -> None:
    deadlines = {"startWithin": "PT5M", "finishWithin": "01:00:00"}
    job = {**HOURLY_RUN_ALL, "executionPolicy": {"deadlines": deadlines}}
    out, err = StringIO(), StringIO()
    code = run(json.dumps(job), now="2024-01-01T05:30:00Z", count=1, out=out, err=err)
    assert code == 0, err.getvalue()
    assert out.getvalue().splitlines()[0] == (
        "# executionPolicy: overlap Allow, missed RunLatest,"
        " deadlines startWithin 00:05:00 finishWithin 01:00:00"
    )
    bad = {**HOURLY_RUN_ALL, "executionPolicy": {"deadlines": {"finishWithin": "PT0S"}}}
    assert run(json.dumps(bad), out=StringIO(), err=err) == 2
    assert err.getvalue().splitlines()[-1] == (
        "error: properties.executionPolicy.deadlines.finishWithin: must be more than 0 and at"
        " most 7.00:00:00"
    )


def test_down_since_marks_what_the_missed_policy_does_with_each_missed_execution() -> None:
    def shown(missed: str, count: str = "2") -> list[str]:
        job = {**HOURLY_RUN_ALL, "executionPolicy": {"missed": missed, "catchUpWindow": "PT2H"}}
        out, err = StringIO(), StringIO()
        code = run(
            json.dumps(job),
            now="2024-01-01T04:30:00Z",
            down_since="2024-01-01T00:30:00Z",
            count=int(count),
            out=out,
            err=err,
        )
        assert code == 0, err.getvalue()
        return out.getvalue().splitlines()

    # Down from 00:30 to 04:30: 01:00 … 04:00 were missed; then 05:00 and 06:00 come.
    assert shown("RunAll", "4")[1:] == [
        "2024-01-01T01:00:00Z  2024-01-01 01:00:00 UTC  [missed: postponed]",
        "2024-01-01T02:00:00Z  2024-01-01 02:00:00 UTC  [missed: postponed]",
        "2024-01-01T03:00:00Z  2024-01-01 03:00:00 UTC  [missed: runs]",
        "2024-01-01T04:00:00Z  2024-01-01 04:00:00 UTC  [missed: runs]",
        "2024-01-01T05:00:00Z  2024-01-01 05:00:00 UTC",
        "2024-01-01T06:00:00Z  2024-01-01 06:00:00 UTC",
        "2024-01-01T07:00:00Z  2024-01-01 07:00:00 UTC",
        "2024-01-01T08:00:00Z  2024-01-01 08:00:00 UTC",
    ]
    # The newest --count missed ones are listed: 03:00 and 04:00.
    assert [line.rsplit("  ", 1)[-1] for line in shown("RunLatest")[1:3]] == [
        "[missed: postponed]",
        "[missed: runs]",
    ]
    assert [line.rsplit("  ", 1)[-1] for line in shown("Skip")[1:3]] == [
        "[missed: postponed]",
        "[missed: postponed]",
    ]


def test_down_since_with_many_missed_says_how_many_are_not_listed() -> None:
    done = horarium(
        "-",
        "--now",
        "2024-01-02T00:30:00Z",
        "--down-since",
        "2024-01-01T00:30:00Z",
        "--count",
        "1",
        stdin=json.dumps(
            {"startTime": "2024-01-01T00:00:00Z", "recurrence": {"frequency": "Hour"}}
        ),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "2024-01-02T00:00:00Z  2024-01-02 00:00:00 UTC  [missed: runs]",
        "2024-01-02T01:00:00Z  2024-01-02 01:00:00 UTC",
    ]
    assert done.stderr.splitlines() == [
        "schedule: every hour from 2024-01-01 00:00 UTC",
        "23 earlier missed executions are not listed",
    ]


def test_a_bad_policy_or_down_since_is_one_line_naming_the_field() -> None:
    bad = {**HOURLY_RUN_ALL, "executionPolicy": {"overlap": "Sometimes"}}
    done = horarium("-", stdin=json.dumps(bad))
    assert done.returncode == 2
    assert done.stderr.startswith("error: properties.executionPolicy.overlap: 'Sometimes'")
    late = horarium(
        "-",
        "--now",
        "2024-01-01T00:00:00Z",
        "--down-since",
        "2024-01-02T00:00:00Z",
        stdin=json.dumps(HOURLY_RUN_ALL),
    )
    assert late.returncode == 2
    assert late.stderr == "error: --down-since: must be before --now\n"
