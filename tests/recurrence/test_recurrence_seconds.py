"""Recurrences finer than a minute (docs/recurrence.md §9 and §2): NCRONTAB's six-field cron
(seconds first, as Azure Functions timers write it) against croniter's `second_at_beginning`,
and `frequency: "Second"`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter

from horarium.recurrence import RecurrenceError, cron_shortest_gap, plan, preview

NOW = datetime(2030, 1, 1, tzinfo=UTC)  # a Tuesday


def cron(expression: str, zone: str = "UTC") -> dict[str, Any]:
    return {"recurrence": {"cron": expression, "timeZone": zone}}


def croniter_runs(expression: str, zone: str, count: int) -> list[datetime]:
    """croniter on the zone's wall clock from NOW (inclusive: croniter starts after the second
    before), resolved in the zone."""
    local = ZoneInfo(zone)
    start = NOW.astimezone(local).replace(tzinfo=None) - timedelta(seconds=1)
    walker = croniter(expression, start, second_at_beginning=True)
    return [walker.get_next(datetime).replace(tzinfo=local).astimezone(UTC) for _ in range(count)]


@pytest.mark.parametrize(
    "expression",
    [
        "0 */5 * * * *",  # Azure Functions' documented examples
        "0 0 * * * *",
        "0 0 */2 * * *",
        "0 0 9-17 * * *",
        "0 30 9 * * *",
        "0 30 9 * * 1-5",
        "0 30 9 * Jan Mon",
        "*/15 * * * * *",
        "10,40 * 8 * * SAT",
        "59 59 23 L * *",
        "5/20 1 2 3 * *",
    ],
)
@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "Asia/Kolkata"])
def test_six_fields_match_croniter(expression: str, zone: str) -> None:
    found = preview(cron(expression, zone), now=NOW, count=8)
    assert found == croniter_runs(expression, zone, 8)


def test_five_fields_still_run_on_the_minute() -> None:
    assert preview(cron("*/20 * * * *"), now=NOW, count=3) == [
        NOW,
        NOW + timedelta(minutes=20),
        NOW + timedelta(minutes=40),
    ]
    assert preview(cron("0 */20 * * * *"), now=NOW, count=3) == preview(
        cron("*/20 * * * *"), now=NOW, count=3
    )


@pytest.mark.parametrize(
    ("expression", "gap"),
    [
        ("*/15 * * * * *", timedelta(seconds=15)),
        ("0,50 * * * * *", timedelta(seconds=10)),
        ("30 * * * * *", timedelta(minutes=1)),
        ("0 0 12 * * *", timedelta(days=1)),
        ("* * * * * *", timedelta(seconds=1)),
    ],
)
def test_the_shortest_gap_counts_seconds(expression: str, gap: timedelta) -> None:
    assert cron_shortest_gap(expression) == gap


def test_every_second_is_bounded_and_quick() -> None:
    found = preview(cron("* * * * * *"), now=NOW, count=1000)
    assert found[-1] == NOW + timedelta(seconds=999)
    assert {b - a for a, b in pairwise(found)} == {timedelta(seconds=1)}


def test_frequency_second_steps_in_elapsed_time_from_the_start() -> None:
    job = {
        "startTime": "2030-01-01T00:00:05Z",
        "recurrence": {"frequency": "Second", "interval": 30, "count": 4},
    }
    assert preview(job, now=NOW, count=10) == [NOW + timedelta(seconds=s) for s in (5, 35, 65, 95)]
    # Across a daylight-saving change, still every 30 s of elapsed time.
    berlin = {
        "startTime": "2030-03-31T00:59:30Z",
        "recurrence": {"frequency": "second", "interval": 30, "timeZone": "Europe/Berlin"},
    }
    start = datetime(2030, 3, 31, 0, 59, 30, tzinfo=UTC)
    assert preview(berlin, now=start, count=3) == [
        start,
        start + timedelta(seconds=30),
        start + timedelta(seconds=60),
    ]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        (
            {"recurrence": {"frequency": "Second", "interval": 1001}},
            "recurrence.interval: 1001 is more than 1000, the most for Second",
        ),
        (
            {"recurrence": {"frequency": "Second", "schedule": {"minutes": [0]}}},
            "recurrence.schedule",
        ),
        ({"recurrence": {"cron": "60 * * * * *"}}, "second field '60': 60 is not in 0..59"),
        ({"recurrence": {"cron": "*/0 * * * * *"}}, "second field '*/0'"),
    ],
)
def test_what_is_refused(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(RecurrenceError) as caught:
        plan(properties, created=NOW)
    assert message in str(caught.value)
