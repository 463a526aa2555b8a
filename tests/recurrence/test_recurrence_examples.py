"""Every worked example of docs/recurrence.md, those of Azure's Scheduler, Logic Apps and Data
Factory recurrence documentation (its schedule tables with their malformed JSON fixed), and the
live recordings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest

import horarium
from horarium.recurrence import plan, preview


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def job(
    frequency: str | None = None, start: str | None = None, **recurrence: Any
) -> dict[str, Any]:
    properties: dict[str, Any] = {"action": {"type": "Http"}}  # other keys are ignored
    if start is not None:
        properties["startTime"] = start
    if frequency is not None:
        properties["recurrence"] = {"frequency": frequency, **recurrence}
    return properties


# 2024 calendar used below: Jan 1 is a Monday; Fridays in Jan 5/12/19/26, Feb 2/9/16/23,
# Mar 1/8/15/22/29, May 3/…/31, Aug 2/…/30, Nov 1/…/29.
START = "2024-01-01T08:00:00Z"  # Monday 08:00
BEFORE = utc(2023, 12, 20)  # created before the start


def daily_at(day_from: int, times: list[tuple[int, int]], days: int = 2) -> list[datetime]:
    return [utc(2024, 1, day_from + k, h, m) for k in range(days) for h, m in sorted(times)]


# --- §1 one-time jobs: the startTime table ---------------------------------------------------


def test_one_time_without_start_runs_once_immediately() -> None:
    created = utc(2016, 3, 30, 20, 40, 35)
    assert preview(job(), now=created) == [created]
    assert plan(job(), created=created).recurring is False


def test_one_time_with_start_in_the_past_runs_once_immediately() -> None:
    # Live service: startTime 2015-07-13 (past) gave nextExecutionTime right after creation.
    created = utc(2016, 3, 30, 20, 40, 35)
    assert preview(job(start="2015-07-13T00:00:00Z"), now=created) == [created]


def test_one_time_with_start_now_or_later_runs_once_at_start() -> None:
    created = utc(2024, 1, 1, 7)
    assert preview(job(start=START), now=created) == [utc(2024, 1, 1, 8)]
    assert preview(job(start=START), now=utc(2024, 1, 1, 8)) == [utc(2024, 1, 1, 8)]


# --- §2 recurrence without schedule ----------------------------------------------------------


def test_series_without_start_runs_immediately_then_every_interval() -> None:
    created = utc(2024, 5, 5, 10, 7, 31)
    assert preview(job("Hour", interval=2), now=created, count=3) == [
        created,
        created + timedelta(hours=2),
        created + timedelta(hours=4),
    ]


def test_series_with_future_start_runs_at_start_then_every_interval() -> None:
    assert preview(job("Day", start=START), now=BEFORE, count=3) == [
        utc(2024, 1, 1, 8),
        utc(2024, 1, 2, 8),
        utc(2024, 1, 3, 8),
    ]


@pytest.mark.parametrize("start_day", [7, 5, 1])
def test_past_start_2015_04_07_example(start_day: int) -> None:
    """Seed: start 2015-04-07 14:00 (or 04-05, 04-01), every 2 days, now 2015-04-08 13:00."""
    properties = job("Day", start=f"2015-04-{start_day:02d}T14:00:00Z", interval=2)
    assert preview(properties, now=utc(2015, 4, 8, 13), count=4) == [
        utc(2015, 4, 9, 14),
        utc(2015, 4, 11, 14),
        utc(2015, 4, 13, 14),
        utc(2015, 4, 15, 14),
    ]


@pytest.mark.parametrize("start_day", [7, 5, 1])
def test_t1_logic_apps_past_start(start_day: int) -> None:
    properties = job("Day", start=f"2017-09-{start_day:02d}T14:00:00Z", interval=2)
    assert preview(properties, now=utc(2017, 9, 8, 13), count=4) == [
        utc(2017, 9, 9, 14),
        utc(2017, 9, 11, 14),
        utc(2017, 9, 13, 14),
        utc(2017, 9, 15, 14),
    ]


def test_t1_adf_past_start() -> None:
    properties = job("Day", start="2017-04-07T14:00:00Z", interval=2)
    assert preview(properties, now=utc(2017, 4, 8, 13), count=4) == [
        utc(2017, 4, 9, 14),
        utc(2017, 4, 11, 14),
        utc(2017, 4, 13, 14),
        utc(2017, 4, 15, 14),
    ]


def test_month_end_clamping_is_computed_from_the_anchor() -> None:
    properties = job("Month", start="2023-01-31T09:00:00Z")
    assert preview(properties, now=utc(2023, 1, 1), count=6) == [
        utc(2023, 1, 31, 9),
        utc(2023, 2, 28, 9),
        utc(2023, 3, 31, 9),  # not the 28th: no drift from the previous run
        utc(2023, 4, 30, 9),
        utc(2023, 5, 31, 9),
        utc(2023, 6, 30, 9),
    ]
    leap = job("Month", start="2024-01-31T09:00:00Z", interval=1)
    assert preview(leap, now=utc(2024, 1, 1), count=2)[1] == utc(2024, 2, 29, 9)


def test_month_end_clamping_with_interval_and_past_start() -> None:
    properties = job("Month", start="2020-08-31T00:00:00Z", interval=3)
    # Aug 31 → Nov 30 → Feb 28 → May 31 → Aug 31 …; created mid-2024
    assert preview(properties, now=utc(2024, 6, 1), count=3) == [
        utc(2024, 8, 31),
        utc(2024, 11, 30),
        utc(2025, 2, 28),
    ]


def test_year_is_twelve_months_and_feb_29_clamps() -> None:
    properties = job("Year", start="2024-02-29T12:00:00Z")
    assert preview(properties, now=utc(2024, 1, 1), count=5) == [
        utc(2024, 2, 29, 12),
        utc(2025, 2, 28, 12),
        utc(2026, 2, 28, 12),
        utc(2027, 2, 28, 12),
        utc(2028, 2, 29, 12),
    ]


def test_minute_and_hour_keep_fixed_spacing_across_dst() -> None:
    properties = job("Hour", start="2019-03-10T00:30:00", timeZone="America/Chicago", interval=1)
    runs = preview(properties, now=utc(2019, 3, 1), count=5)
    assert [b - a for a, b in pairwise(runs)] == [timedelta(hours=1)] * 4
    assert runs[0] == utc(2019, 3, 10, 6, 30)


def test_day_keeps_wall_clock_time_across_dst() -> None:
    properties = job("Day", start="2019-03-09T08:00:00", timeZone="Europe/Berlin", interval=1)
    berlin = [
        r.astimezone(plan(properties, created=BEFORE).zone)
        for r in preview(properties, now=utc(2019, 3, 1), count=30)
    ]
    assert {(r.hour, r.minute) for r in berlin} == {(8, 0)}
    assert {r.utcoffset() for r in berlin} == {timedelta(hours=1), timedelta(hours=2)}


# --- §3 schedules: docs/recurrence.md's table and Azure's examples ---------------------------

HOURLY = [(h, 0) for h in range(24)]

T4_CASES: list[tuple[str, dict[str, Any], str, list[datetime]]] = [
    ("Day", {"hours": [5]}, START, [utc(2024, 1, 2, 5), utc(2024, 1, 3, 5)]),
    (
        "Day",
        {"minutes": [15], "hours": [5]},
        START,
        [utc(2024, 1, 2, 5, 15), utc(2024, 1, 3, 5, 15)],
    ),
    (
        "Day",
        {"minutes": [15], "hours": [5, 17]},
        START,
        [utc(2024, 1, 1, 17, 15), utc(2024, 1, 2, 5, 15), utc(2024, 1, 2, 17, 15)],
    ),
    (
        "Day",
        {"minutes": [15, 45], "hours": [5, 17]},
        START,
        [
            utc(2024, 1, 1, 17, 15),
            utc(2024, 1, 1, 17, 45),
            utc(2024, 1, 2, 5, 15),
            utc(2024, 1, 2, 5, 45),
            utc(2024, 1, 2, 17, 15),
        ],
    ),
    (
        "Day",
        {"minutes": [0, 15, 30, 45]},
        START,
        [
            utc(2024, 1, 1, 8, 0),
            utc(2024, 1, 1, 8, 15),
            utc(2024, 1, 1, 8, 30),
            utc(2024, 1, 1, 8, 45),
            utc(2024, 1, 1, 9, 0),
        ],
    ),
    # the malformed `{hours":[0, 1, …, 23]}`: minutes come from the start time (12:25)
    (
        "Day",
        {"hours": list(range(24))},
        "2024-01-01T12:25:00Z",
        [utc(2024, 1, 1, h, 25) for h in range(12, 24)] + [utc(2024, 1, 2, 0, 25)],
    ),
    (
        "Day",
        {"minutes": [0]},
        START,
        [utc(2024, 1, 1, h) for h in range(8, 24)] + [utc(2024, 1, 2)],
    ),
    (
        "Day",
        {"minutes": [15]},
        START,
        [utc(2024, 1, 1, h, 15) for h in range(8, 24)] + [utc(2024, 1, 2, 0, 15)],
    ),
    (
        "Week",
        {"hours": [17], "weekDays": ["saturday"]},
        START,
        [utc(2024, 1, 6, 17), utc(2024, 1, 13, 17), utc(2024, 1, 20, 17)],
    ),
    (
        "Week",
        {"hours": [17], "weekDays": ["monday", "wednesday", "friday"]},
        START,
        [utc(2024, 1, 1, 17), utc(2024, 1, 3, 17), utc(2024, 1, 5, 17), utc(2024, 1, 8, 17)],
    ),
    (
        "Week",
        {"minutes": [15, 45], "hours": [17], "weekDays": ["monday", "wednesday", "friday"]},
        START,
        [
            utc(2024, 1, 1, 17, 15),
            utc(2024, 1, 1, 17, 45),
            utc(2024, 1, 3, 17, 15),
            utc(2024, 1, 3, 17, 45),
            utc(2024, 1, 5, 17, 15),
        ],
    ),
    # the JSON with a missing comma before "weekDays", fixed
    (
        "Week",
        {
            "minutes": [0, 15, 30, 45],
            "hours": list(range(9, 17)),
            "weekDays": ["monday", "tuesday", "wednesday", "thursday", "friday"],
        },
        "2024-01-05T16:30:00Z",
        [
            utc(2024, 1, 5, 16, 30),
            utc(2024, 1, 5, 16, 45),
            utc(2024, 1, 8, 9, 0),
            utc(2024, 1, 8, 9, 15),
        ],
    ),
    (
        "Week",
        {"weekDays": ["tuesday", "thursday"]},
        START,
        [utc(2024, 1, 2, 8), utc(2024, 1, 4, 8), utc(2024, 1, 9, 8), utc(2024, 1, 11, 8)],
    ),
    (
        "Month",
        {"minutes": [0], "hours": [6], "monthDays": [28]},
        START,
        [utc(2024, 1, 28, 6), utc(2024, 2, 28, 6), utc(2024, 3, 28, 6)],
    ),
    (
        "Month",
        {"minutes": [0], "hours": [6], "monthDays": [-1]},
        START,
        [utc(2024, 1, 31, 6), utc(2024, 2, 29, 6), utc(2024, 3, 31, 6), utc(2024, 4, 30, 6)],
    ),
    (
        "Month",
        {"minutes": [0], "hours": [6], "monthDays": [1, -1]},
        START,
        [utc(2024, 1, 31, 6), utc(2024, 2, 1, 6), utc(2024, 2, 29, 6), utc(2024, 3, 1, 6)],
    ),
    # the malformed `{monthDays":[1,14]}`
    (
        "Month",
        {"monthDays": [1, 14]},
        START,
        [utc(2024, 1, 1, 8), utc(2024, 1, 14, 8), utc(2024, 2, 1, 8), utc(2024, 2, 14, 8)],
    ),
    (
        "Month",
        {"minutes": [0], "hours": [5], "monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
        START,
        [utc(2024, 1, 5, 5), utc(2024, 2, 2, 5), utc(2024, 3, 1, 5)],
    ),
    (
        "Month",
        {"monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
        START,
        [utc(2024, 1, 5, 8), utc(2024, 2, 2, 8), utc(2024, 3, 1, 8)],
    ),
    (
        "Month",
        {"monthlyOccurrences": [{"day": "friday", "occurrence": -3}]},
        START,
        [utc(2024, 1, 12, 8), utc(2024, 2, 9, 8), utc(2024, 3, 15, 8)],
    ),
    (
        "Month",
        {
            "minutes": [15],
            "hours": [5],
            "monthlyOccurrences": [
                {"day": "friday", "occurrence": 1},
                {"day": "friday", "occurrence": -1},
            ],
        },
        START,
        [
            utc(2024, 1, 5, 5, 15),
            utc(2024, 1, 26, 5, 15),
            utc(2024, 2, 2, 5, 15),
            utc(2024, 2, 23, 5, 15),
            utc(2024, 3, 1, 5, 15),
            utc(2024, 3, 29, 5, 15),
        ],
    ),
    (
        "Month",
        {
            "monthlyOccurrences": [
                {"day": "friday", "occurrence": 1},
                {"day": "friday", "occurrence": -1},
            ]
        },
        START,
        [utc(2024, 1, 5, 8), utc(2024, 1, 26, 8), utc(2024, 2, 2, 8), utc(2024, 2, 23, 8)],
    ),
    # the fifth Friday: months without one are skipped
    (
        "Month",
        {"monthlyOccurrences": [{"day": "friday", "occurrence": 5}]},
        START,
        [utc(2024, 3, 29, 8), utc(2024, 5, 31, 8), utc(2024, 8, 30, 8), utc(2024, 11, 29, 8)],
    ),
    (
        "Month",
        {"minutes": [0, 15, 30, 45], "monthlyOccurrences": [{"day": "friday", "occurrence": -1}]},
        START,
        [utc(2024, 1, 26, 0, 0), utc(2024, 1, 26, 0, 15), utc(2024, 1, 26, 0, 30)],
    ),
    (
        "Month",
        {
            "minutes": [15, 45],
            "hours": [5, 17],
            "monthlyOccurrences": [{"day": "wednesday", "occurrence": 3}],
        },
        START,
        [
            utc(2024, 1, 17, 5, 15),
            utc(2024, 1, 17, 5, 45),
            utc(2024, 1, 17, 17, 15),
            utc(2024, 1, 17, 17, 45),
            utc(2024, 2, 21, 5, 15),
        ],
    ),
    # SCHED-ADV-2016's extra rows
    (
        "Week",
        {"hours": [5, 17], "weekDays": ["monday", "wednesday", "friday"]},
        START,
        [utc(2024, 1, 1, 17), utc(2024, 1, 3, 5), utc(2024, 1, 3, 17), utc(2024, 1, 5, 5)],
    ),
    (
        "Week",
        {"minutes": [15, 45], "hours": [5, 17], "weekDays": ["monday", "wednesday", "friday"]},
        START,
        [utc(2024, 1, 1, 17, 15), utc(2024, 1, 1, 17, 45), utc(2024, 1, 3, 5, 15)],
    ),
    ("Week", {"weekDays": ["sunday"]}, START, [utc(2024, 1, 7, 8), utc(2024, 1, 14, 8)]),
    (
        "Month",
        {"monthDays": [1, -1]},
        START,
        [utc(2024, 1, 1, 8), utc(2024, 1, 31, 8), utc(2024, 2, 1, 8), utc(2024, 2, 29, 8)],
    ),
    ("Month", {"monthDays": [2]}, START, [utc(2024, 1, 2, 8), utc(2024, 2, 2, 8)]),
]


@pytest.mark.parametrize(("frequency", "schedule", "start", "expected"), T4_CASES)
def test_t4_schedule_examples(
    frequency: str, schedule: dict[str, Any], start: str, expected: list[datetime]
) -> None:
    properties = job(frequency, start=start, interval=1, schedule=schedule)
    assert preview(properties, now=BEFORE, count=len(expected)) == expected


def test_design_hours_only_takes_the_anchors_minute() -> None:
    properties = job("Day", start="2024-01-01T12:25:00Z", schedule={"hours": [5]})
    assert preview(properties, now=BEFORE, count=2) == [
        utc(2024, 1, 2, 5, 25),
        utc(2024, 1, 3, 5, 25),
    ]


def test_design_minutes_0_weekly_is_hourly_on_the_anchors_weekday_only() -> None:
    properties = job("Week", start="2024-01-03T00:00:00Z", schedule={"minutes": [0]})
    runs = preview(properties, now=BEFORE, count=25)
    assert runs[:24] == [utc(2024, 1, 3, h) for h in range(24)]
    assert runs[24] == utc(2024, 1, 10, 0)  # next Wednesday


def test_minutes_0_monthly_is_hourly_on_one_day_a_month() -> None:
    properties = job("Month", start="2024-01-10T00:00:00Z", schedule={"minutes": [0]})
    runs = preview(properties, now=BEFORE, count=25)
    assert runs[23] == utc(2024, 1, 10, 23) and runs[24] == utc(2024, 2, 10, 0)


def test_hours_every_hour_equals_hour_frequency() -> None:
    """`{"hours":[0..23]}` Day is equivalent to Hour/1 without schedule (anchor's minute)."""
    by_schedule = job("Day", start="2024-01-01T12:25:00Z", schedule={"hours": list(range(24))})
    by_hour = job("Hour", start="2024-01-01T12:25:00Z")
    assert preview(by_schedule, now=BEFORE, count=50) == preview(by_hour, now=BEFORE, count=50)


def test_minute_inheritance_monthly_hours() -> None:
    """Start 8:25, Month, hours 0..23 → 8:25, 9:25, … on one day per month."""
    properties = job("Month", start="2024-01-10T08:25:00Z", schedule={"hours": list(range(24))})
    runs = preview(properties, now=BEFORE, count=17)
    assert runs[:16] == [utc(2024, 1, 10, h, 25) for h in range(8, 24)]
    assert runs[16] == utc(2024, 2, 10, 0, 25)


def test_union_of_month_days_and_occurrences() -> None:
    """**decided**: monthDays and monthlyOccurrences add up, they don't filter."""
    properties = job(
        "Month",
        start=START,
        schedule={"monthDays": [10], "monthlyOccurrences": [{"day": "friday", "occurrence": 1}]},
    )
    assert preview(properties, now=BEFORE, count=4) == [
        utc(2024, 1, 5, 8),
        utc(2024, 1, 10, 8),
        utc(2024, 2, 2, 8),
        utc(2024, 2, 10, 8),
    ]


def test_occurrence_without_number_is_every_such_day() -> None:
    properties = job("Month", start=START, schedule={"monthlyOccurrences": [{"day": "Friday"}]})
    assert preview(properties, now=BEFORE, count=5) == [
        utc(2024, 1, d, 8) for d in (5, 12, 19, 26)
    ] + [utc(2024, 2, 2, 8)]


def test_month_day_31_is_skipped_not_clamped() -> None:
    properties = job("Month", start=START, schedule={"monthDays": [31]})
    assert preview(properties, now=BEFORE, count=5) == [
        utc(2024, 1, 31, 8),
        utc(2024, 3, 31, 8),
        utc(2024, 5, 31, 8),
        utc(2024, 7, 31, 8),
        utc(2024, 8, 31, 8),
    ]


def test_month_schedule_without_days_uses_anchor_day_and_skips() -> None:
    properties = job("Month", start="2024-01-31T08:00:00Z", schedule={"hours": [6, 20]})
    assert preview(properties, now=BEFORE, count=3) == [
        utc(2024, 1, 31, 20),
        utc(2024, 3, 31, 6),
        utc(2024, 3, 31, 20),
    ]


def test_year_schedule_uses_anchor_date_and_skips_feb_29() -> None:
    properties = job("Year", start="2024-02-29T00:00:00Z", schedule={"hours": [9], "minutes": [0]})
    assert preview(properties, now=BEFORE, count=2) == [utc(2024, 2, 29, 9), utc(2028, 2, 29, 9)]


def test_weekly_interval_2_counts_monday_weeks_from_the_anchor() -> None:
    """**decided**: weeks start on Monday; week 0 is the anchor's week."""
    properties = job(
        "Week",
        start="2024-01-03T10:00:00Z",
        interval=2,
        schedule={"weekDays": ["Monday", "Friday"]},
    )
    assert preview(properties, now=BEFORE, count=5) == [
        utc(2024, 1, 5, 10),
        utc(2024, 1, 15, 10),
        utc(2024, 1, 19, 10),
        utc(2024, 1, 29, 10),
        utc(2024, 2, 2, 10),
    ]


def test_weekly_interval_2_sunday_closes_the_monday_week() -> None:
    properties = job(
        "Week",
        start="2024-01-07T10:00:00Z",
        interval=2,
        schedule={"weekDays": ["sunday", "monday"]},
    )
    assert preview(properties, now=BEFORE, count=4) == [
        utc(2024, 1, 7, 10),
        utc(2024, 1, 15, 10),
        utc(2024, 1, 21, 10),
        utc(2024, 1, 29, 10),
    ]


def test_la_biweekly_every_15_minutes_on_mondays() -> None:
    properties = job(
        "Week",
        start="2024-01-01T00:00:00Z",
        interval=2,
        schedule={"weekDays": ["Monday"], "hours": list(range(24)), "minutes": [0, 15, 30, 45]},
    )
    runs = preview(properties, now=BEFORE, count=97)
    assert runs[95] == utc(2024, 1, 1, 23, 45)
    assert runs[96] == utc(2024, 1, 15, 0, 0)


def test_seconds_are_zero_with_minutes_and_the_anchors_otherwise() -> None:
    """**decided**: seconds 0 when minutes are given; otherwise the anchor's second."""
    with_minutes = job("Day", start="2024-01-01T08:00:42.5Z", schedule={"minutes": [30]})
    assert preview(with_minutes, now=BEFORE, count=1) == [utc(2024, 1, 1, 8, 30)]
    hours_only = job("Day", start="2024-01-01T08:00:42.5Z", schedule={"hours": [9]})
    assert preview(hours_only, now=BEFORE, count=1) == [
        datetime(2024, 1, 1, 9, 0, 42, 500000, tzinfo=UTC)
    ]


# --- the schedule table's first-run rows -------------------------------------------------------


def test_schedule_without_start_runs_at_created_then_by_the_schedule() -> None:
    created = utc(2024, 1, 1, 12, 25, 10)
    properties = job("Day", schedule={"hours": [8, 16], "minutes": [0]})
    assert preview(properties, now=created, count=3) == [
        created,
        utc(2024, 1, 1, 16),
        utc(2024, 1, 2, 8),
    ]


def test_schedule_with_past_start_runs_at_the_first_match_after_created() -> None:
    properties = job(
        "Day", start="2020-01-01T00:00:00Z", schedule={"hours": [8, 16], "minutes": [0]}
    )
    assert preview(properties, now=utc(2024, 1, 1, 12, 25), count=2) == [
        utc(2024, 1, 1, 16),
        utc(2024, 1, 2, 8),
    ]


def test_schedule_with_future_start_runs_no_sooner_than_start() -> None:
    properties = job(
        "Day", start="2024-01-01T12:00:00Z", schedule={"hours": [8, 16], "minutes": [0]}
    )
    assert preview(properties, now=BEFORE, count=2) == [utc(2024, 1, 1, 16), utc(2024, 1, 2, 8)]


# --- a future start with a schedule (Azure's advanced-schedules article) ------------------------


def test_t2_logic_apps_monday_schedule_in_pacific_time() -> None:
    properties = job(
        "Week",
        start="2020-09-18T08:00:00",
        timeZone="Pacific Standard Time",
        schedule={"weekDays": ["Monday"], "hours": [10, 12, 14], "minutes": [30]},
    )
    assert preview(properties, now=utc(2020, 9, 4), count=6) == [
        utc(2020, 9, 21, 17, 30),
        utc(2020, 9, 21, 19, 30),
        utc(2020, 9, 21, 21, 30),
        utc(2020, 9, 28, 17, 30),
        utc(2020, 9, 28, 19, 30),
        utc(2020, 9, 28, 21, 30),
    ]


def test_t2_saturday_start_instant_itself_runs() -> None:
    properties = job("Week", start="2017-09-09T17:00:00Z", schedule={"weekDays": ["Saturday"]})
    assert preview(properties, now=utc(2017, 9, 1), count=3) == [
        utc(2017, 9, 9, 17),
        utc(2017, 9, 16, 17),
        utc(2017, 9, 23, 17),
    ]


def test_t2_hour_at_quarter_past() -> None:
    properties = job("Hour", start="2017-09-09T00:15:00Z")
    assert preview(properties, now=utc(2017, 9, 1), count=3) == [
        utc(2017, 9, 9, 0, 15),
        utc(2017, 9, 9, 1, 15),
        utc(2017, 9, 9, 2, 15),
    ]


# --- the Logic Apps US Central 2019 daylight-saving table (docs/recurrence.md §4) ----------------

T3_CASES = [
    (
        "2019-03-09T01:30:00",
        [utc(2019, 3, 9, 7, 30), utc(2019, 3, 10, 7, 30), utc(2019, 3, 11, 6, 30)],
    ),
    (
        "2019-03-09T02:30:00",
        [utc(2019, 3, 9, 8, 30), utc(2019, 3, 10, 8, 30), utc(2019, 3, 11, 7, 30)],
    ),
    (
        "2019-11-02T01:30:00",
        [utc(2019, 11, 2, 6, 30), utc(2019, 11, 3, 6, 30), utc(2019, 11, 4, 7, 30)],
    ),
    (
        "2019-11-02T02:30:00",
        [utc(2019, 11, 2, 7, 30), utc(2019, 11, 3, 8, 30), utc(2019, 11, 4, 8, 30)],
    ),
]


@pytest.mark.parametrize(("start", "expected"), T3_CASES)
def test_t3_us_central_2019_dst_table(start: str, expected: list[datetime]) -> None:
    properties = job("Day", start=start, timeZone="Central Standard Time")
    assert preview(properties, now=utc(2019, 1, 1), count=3) == expected


def test_t3_marks_moved_and_merged_instances() -> None:
    spring = plan(
        job("Day", start="2019-03-09T02:30:00", timeZone="Central Standard Time"),
        created=utc(2019, 1, 1),
    )
    moved = spring.describe(utc(2019, 3, 10, 8, 30))
    assert moved.moved and not moved.merged
    assert (moved.local.hour, moved.local.minute) == (3, 30)
    assert (moved.wall.hour, moved.wall.minute) == (2, 30)
    assert not spring.describe(utc(2019, 3, 11, 7, 30)).moved
    autumn = plan(
        job("Day", start="2019-11-02T01:30:00", timeZone="Central Standard Time"),
        created=utc(2019, 1, 1),
    )
    merged = autumn.describe(utc(2019, 11, 3, 6, 30))
    assert merged.merged and not merged.moved
    assert not autumn.describe(utc(2019, 11, 4, 7, 30)).merged


def test_two_wall_times_naming_one_instant_run_once() -> None:
    """Spring forward: 02:30 (nonexistent) and 03:30 name the same instant: it runs once."""
    properties = job(
        "Day",
        start="2019-03-09T00:00:00",
        timeZone="America/Chicago",
        schedule={"hours": [2, 3], "minutes": [30]},
    )
    runs = preview(properties, now=utc(2019, 3, 1), count=6)
    assert runs == [
        utc(2019, 3, 9, 8, 30),
        utc(2019, 3, 9, 9, 30),
        utc(2019, 3, 10, 8, 30),
        utc(2019, 3, 11, 7, 30),
        utc(2019, 3, 11, 8, 30),
        utc(2019, 3, 12, 7, 30),
    ]
    compiled = plan(properties, created=utc(2019, 3, 1))
    both = compiled.describe(utc(2019, 3, 10, 8, 30))
    assert both.moved and both.merged


def test_every_15_minutes_across_spring_forward_has_no_duplicates() -> None:
    properties = job(
        "Day",
        start="2019-03-10T01:00:00",
        timeZone="America/Chicago",
        schedule={"minutes": [0, 15, 30, 45]},
    )
    runs = preview(properties, now=utc(2019, 3, 1), count=8)
    assert runs == [utc(2019, 3, 10, 7, m) for m in (0, 15, 30, 45)] + [
        utc(2019, 3, 10, 8, m) for m in (0, 15, 30, 45)
    ]


# --- §5 count and endTime, with Azure's and Data Factory's examples ------------------------


def test_t5_daily_count_5_from_monday_ends_friday() -> None:
    runs = preview(job("Day", start=START, count=5), now=BEFORE, count=100)
    assert [r.strftime("%A") for r in runs] == [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
    ]


def test_t5_daily_count_7_from_monday_ends_sunday() -> None:
    runs = preview(job("Day", start=START, count=7), now=BEFORE, count=100)
    assert len(runs) == 7 and runs[-1] == utc(2024, 1, 7, 8)


def test_count_does_not_include_discarded_past_instances() -> None:
    properties = job("Day", start="2015-04-07T14:00:00Z", interval=2, count=3)
    assert preview(properties, now=utc(2015, 4, 8, 13), count=10) == [
        utc(2015, 4, 9, 14),
        utc(2015, 4, 11, 14),
        utc(2015, 4, 13, 14),
    ]


def test_t6_end_time_is_exclusive() -> None:
    properties = job(
        "Minute", start="2017-12-08T00:00:00Z", interval=15, endTime="2017-12-08T01:00:00Z"
    )
    just_after_start = utc(2017, 12, 8) + timedelta(milliseconds=500)
    assert preview(properties, now=just_after_start, count=10) == [
        utc(2017, 12, 8, 0, 15),
        utc(2017, 12, 8, 0, 30),
        utc(2017, 12, 8, 0, 45),
    ]
    assert preview(properties, now=utc(2017, 12, 7), count=10) == [
        utc(2017, 12, 8, 0, 0),
        utc(2017, 12, 8, 0, 15),
        utc(2017, 12, 8, 0, 30),
        utc(2017, 12, 8, 0, 45),
    ]


@pytest.mark.parametrize(
    ("count", "end", "expected_runs"),
    [
        (5, "2024-01-03T12:00:00Z", 3),  # endTime first
        (2, "2024-01-03T12:00:00Z", 2),  # count first
        (5, "2024-01-10T00:00:00Z", 5),
    ],
)
def test_count_and_end_time_together_whichever_ends_first(
    count: int, end: str, expected_runs: int
) -> None:
    properties = job("Day", start=START, count=count, endTime=end)
    assert len(preview(properties, now=BEFORE, count=100)) == expected_runs


def test_end_time_in_the_past_completes_at_once() -> None:
    properties = job("Day", start=START, endTime="2020-01-01")
    compiled = plan(properties, created=BEFORE)
    assert compiled.first is None
    assert preview(properties, now=BEFORE) == []


def test_date_only_end_time_is_midnight_in_the_zone() -> None:
    properties = job(
        "Hour", start="2012-11-03T20:00:00", timeZone="Europe/Berlin", endTime="2012-11-04"
    )
    runs = preview(properties, now=utc(2012, 11, 1), count=100)
    assert runs[-1] == utc(2012, 11, 3, 22)  # 23:00 Berlin; 00:00 (= endTime) excluded
    assert len(runs) == 4


def test_sample_json_with_count_and_date_only_end() -> None:
    """SCHED-ADV-2016's sample carries both `count: 10` and `endTime: "2012-11-04"`."""
    properties = job("Day", start="2012-10-30T10:00:00Z", count=10, endTime="2012-11-04")
    runs = preview(properties, now=utc(2012, 10, 1), count=100)
    assert runs == [utc(2012, 10, d, 10) for d in (30, 31)] + [
        utc(2012, 11, d, 10) for d in (1, 2, 3)
    ]


# --- live-service recordings --------------------------------------------------------------------


def test_recorded_weekly_job_next_execution() -> None:
    properties = job(
        "week",
        start="2015-07-13T00:00:00Z",
        interval=1,
        count=10000,
        endTime="2020-10-10T10:10:10Z",
    )
    compiled = plan(properties, created=utc(2016, 3, 30, 20, 40, 35))
    assert compiled.first == utc(2016, 4, 4)


def test_recorded_patch_to_daily_next_execution() -> None:
    properties = job(
        "Day", start="2015-07-14T00:00:00Z", interval=1, count=10000, endTime="2020-10-10T10:10:10Z"
    )
    assert plan(properties, created=utc(2016, 3, 30, 20, 41)).first == utc(2016, 3, 31)


def test_recorded_monthly_occurrences_job_next_execution() -> None:
    """Created 2016-03-30T19:35Z → next 2016-04-01T05:00Z (first Friday; the .NET SDK sends
    "Occurrence" with a capital O). The recording's startTime lies in the past."""
    properties = job(
        "Month",
        start="2015-07-13T00:00:00Z",
        schedule={
            "hours": [5, 10, 15, 20],
            "minutes": [0, 10, 20, 30, 40, 50],
            "monthlyOccurrences": [
                {"day": "Monday", "Occurrence": 1},
                {"day": "Friday", "Occurrence": 1},
            ],
        },
    )
    assert plan(properties, created=utc(2016, 3, 30, 19, 35)).first == utc(2016, 4, 1, 5)


def test_top_level_preview_is_exported() -> None:
    assert horarium.preview is preview
    assert issubclass(horarium.RecurrenceError, ValueError)
