"""`horarium.importers.functions`: Functions projects and WebJobs on disk read into jobs (pure:
files in, documents out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from horarium.importers.documents import SourceError
from horarium.importers.functions import read_functions, recurrence_of

WHERE = ("rg", "jc")


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))


def timer(schedule: str, **more: Any) -> dict[str, Any]:
    return {"bindings": [{"type": "TimerTrigger", "schedule": schedule, "name": "t"}], **more}


@pytest.mark.parametrize(
    ("schedule", "recurrence"),
    [
        ("00:00:30", {"frequency": "Second", "interval": 30}),
        ("00:05:00", {"frequency": "Minute", "interval": 5}),
        ("01:30:00", {"frequency": "Minute", "interval": 90}),
        ("02:00:00", {"frequency": "Hour", "interval": 2}),
        ("1.00:00:00", {"frequency": "Day", "interval": 1}),
        ("0 */5 * * * *", {"cron": "0 */5 * * * *"}),
    ],
)
def test_schedules(schedule: str, recurrence: dict[str, Any]) -> None:
    assert recurrence_of(schedule, Path("f")) == recurrence


@pytest.mark.parametrize(
    ("schedule", "rule"),
    [
        ("00:20:01", "is not at most 1000 of one unit"),  # 1201 s
        ("00:00:00", "is zero"),
        ("00:61:00", "is not a TimeSpan"),
    ],
)
def test_timespans_a_recurrence_cannot_hold(schedule: str, rule: str) -> None:
    with pytest.raises(SourceError, match=rule):
        recurrence_of(schedule, Path("f"))


def test_settings_come_from_set_over_local_settings(tmp_path: Path) -> None:
    write(tmp_path / "local.settings.json", {"Values": {"S": "0 0 * * * *", "Other": "x"}})
    write(tmp_path / "A" / "function.json", timer("%S%"))
    write(tmp_path / "B" / "function.json", timer("0 %M% * * * *"))
    found = read_functions(tmp_path, {"M": "15"}, WHERE, None)
    assert [t.document.body["properties"]["recurrence"] for t in found] == [
        {"cron": "0 0 * * * *"},
        {"cron": "0 15 * * * *"},
    ]
    found = read_functions(tmp_path, {"M": "15", "S": "0 1 * * * *"}, WHERE, None)
    assert found[0].document.body["properties"]["recurrence"] == {"cron": "0 1 * * * *"}


def test_the_build_output_copy_is_read_once_and_skipped_folders_are_not_read(
    tmp_path: Path,
) -> None:
    write(tmp_path / "Job" / "function.json", timer("0 0 1 * * *"))
    write(tmp_path / "bin" / "Release" / "net8.0" / "Job" / "function.json", timer("0 0 9 * * *"))
    write(tmp_path / "node_modules" / "x" / "Other" / "function.json", timer("0 0 2 * * *"))
    (found,) = read_functions(tmp_path, {}, WHERE, None)
    assert found.document.names == ("jc", "Job")
    assert found.document.body["properties"]["recurrence"] == {"cron": "0 0 1 * * *"}


def test_disabled_by_the_file_or_by_the_app_setting(tmp_path: Path) -> None:
    write(tmp_path / "local.settings.json", {"Values": {"AzureWebJobs.B.Disabled": "true"}})
    write(tmp_path / "A" / "function.json", timer("0 0 1 * * *", disabled=True))
    write(tmp_path / "B" / "function.json", timer("0 0 1 * * *"))
    write(tmp_path / "C" / "function.json", timer("0 0 1 * * *", disabled=False))
    states = [
        t.document.body["properties"].get("state")
        for t in read_functions(tmp_path, {}, WHERE, None)
    ]
    assert states == ["Disabled", "Disabled", None]


def test_webjobs_and_what_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "continuous" / "Loop" / "settings.job", {"is_singleton": True})
    write(
        tmp_path / "triggered" / "Sync" / "settings.job",
        {"schedule": "0 0 * * * *", "stopping_wait_time": 60},
    )
    (found,) = read_functions(tmp_path, {}, WHERE, "https://example.com/{name}")
    assert found.document.body["properties"]["action"] == {
        "type": "Https",
        "request": {"method": "POST", "uri": "https://example.com/Sync"},
    }
    assert found.not_carried == [
        f"{tmp_path / 'triggered' / 'Sync' / 'settings.job'}: stopping_wait_time"
    ]
    write(tmp_path / "Bad" / "function.json", {"bindings": [{"type": "timerTrigger"}]})
    with pytest.raises(SourceError, match="the timerTrigger binding has no schedule"):
        read_functions(tmp_path, {}, WHERE, None)


def test_folders_deeper_than_the_bound_are_not_read(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*[f"d{i}" for i in range(10)], "Job", "function.json")
    write(deep, timer("0 0 1 * * *"))
    with pytest.raises(SourceError, match="no timer trigger"):
        read_functions(tmp_path, {}, WHERE, None)
