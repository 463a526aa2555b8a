"""The `Plan` interface the API and the engine code against: first / at_or_after / after /
iter_from agree, old anchors are answered directly, series that never run or run off the end of
the calendar end cleanly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice
from zoneinfo import ZoneInfo

import pytest

from horarium.recurrence import RecurrenceError, plan, preview


def utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


NOW = utc(2024, 6, 1, 12, 0, 30)


def test_plan_exposes_count_end_zone_and_recurring() -> None:
    compiled = plan(
        {
            "startTime": "2024-06-03T09:00:00",
            "recurrence": {
                "frequency": "Day",
                "count": 3,
                "endTime": "2024-07-01",
                "timeZone": "W. Europe Standard Time",
            },
        },
        created=NOW,
    )
    assert compiled.recurring is True
    assert compiled.count == 3
    assert compiled.end == utc(2024, 6, 30, 22)  # midnight in Berlin (CEST)
    assert compiled.zone == ZoneInfo("Europe/Berlin")
    assert compiled.first == utc(2024, 6, 3, 7)


def test_first_at_or_after_after_and_iter_from_agree() -> None:
    compiled = plan(
        {"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "Thursday"]}}},
        created=NOW,  # a Saturday: runs now, then Mondays and Thursdays at 12:00:30
    )
    assert compiled.first == NOW
    assert compiled.at_or_after(NOW - timedelta(days=30)) == NOW  # never before first
    nxt = compiled.after(NOW)
    assert nxt == utc(2024, 6, 3, 12, 0, 30)
    assert compiled.at_or_after(nxt) == nxt
    assert compiled.after(nxt) == utc(2024, 6, 6, 12, 0, 30)
    assert list(islice(compiled.iter_from(NOW), 4)) == [
        NOW,
        utc(2024, 6, 3, 12, 0, 30),
        utc(2024, 6, 6, 12, 0, 30),
        utc(2024, 6, 10, 12, 0, 30),
    ]


def test_one_time_plan() -> None:
    compiled = plan({"startTime": "2024-06-02T00:00:00Z"}, created=NOW)
    assert compiled.recurring is False
    assert compiled.first == utc(2024, 6, 2)
    assert compiled.after(utc(2024, 6, 2)) is None
    assert list(compiled.iter_from(NOW)) == [utc(2024, 6, 2)]


def test_iter_from_stops_at_end_time_and_ignores_count() -> None:
    compiled = plan(
        {
            "startTime": "2024-06-01T00:00:00Z",
            "recurrence": {"frequency": "Hour", "count": 2, "endTime": "2024-06-01T05:00:00Z"},
        },
        created=utc(2024, 5, 1),
    )
    assert list(compiled.iter_from(utc(2024, 5, 1))) == [utc(2024, 6, 1, h) for h in range(5)]


def test_anchor_a_century_back_is_answered_exactly() -> None:
    compiled = plan(
        {"startTime": "1924-06-01T00:00:07Z", "recurrence": {"frequency": "Minute", "interval": 7}},
        created=NOW,
    )
    first = compiled.first
    assert first is not None and first >= NOW
    assert (first - utc(1924, 6, 1, 0, 0, 7)) % timedelta(minutes=7) == timedelta(0)
    assert first - NOW < timedelta(minutes=7)
    last_friday = plan(
        {
            "startTime": "1924-01-01T10:00:00Z",
            "recurrence": {
                "frequency": "Month",
                "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -1}]},
            },
        },
        created=NOW,
    )
    assert last_friday.first == utc(2024, 6, 28, 10)


def test_a_schedule_that_never_runs_has_no_first() -> None:
    never = plan(  # every 12 months from February, on the 30th: February has none
        {
            "startTime": "2024-02-01T00:00:00Z",
            "recurrence": {"frequency": "Month", "interval": 12, "schedule": {"monthDays": [30]}},
        },
        created=NOW,
    )
    assert never.first is None
    assert never.at_or_after(NOW) is None
    assert (
        preview(
            {
                "startTime": "2024-02-01T00:00:00Z",
                "recurrence": {
                    "frequency": "Month",
                    "interval": 12,
                    "schedule": {"monthDays": [30]},
                },
            },
            now=NOW,
        )
        == []
    )


def test_rare_days_are_found_far_ahead() -> None:
    """The fifth Monday of February, every 12 months: only in leap years starting on a Monday."""
    compiled = plan(
        {
            "startTime": "2016-02-01T00:00:00Z",
            "recurrence": {
                "frequency": "Month",
                "interval": 12,
                "schedule": {"monthlyOccurrences": [{"day": "Monday", "occurrence": 5}]},
            },
        },
        created=utc(2016, 3, 1),
    )
    assert compiled.first == utc(2044, 2, 29)


def test_series_running_off_the_calendar_ends_cleanly() -> None:
    compiled = plan(
        {"startTime": "8999-12-31T00:00:00Z", "recurrence": {"frequency": "Month", "interval": 18}},
        created=NOW,
    )
    assert compiled.first == utc(8999, 12, 31)
    assert compiled.at_or_after(datetime(9999, 12, 1, tzinfo=UTC)) is None
    assert compiled.after(datetime(9999, 12, 31, 23, 59, tzinfo=UTC)) is None
    runs = list(compiled.iter_from(utc(9990, 1, 1)))
    assert runs[-1] == utc(9998, 12, 31)  # the next one (June 10000) cannot exist


def test_naive_instants_are_refused() -> None:
    compiled = plan({"recurrence": {"frequency": "Day"}}, created=NOW)
    with pytest.raises(RecurrenceError, match="instant: must be an aware datetime"):
        compiled.at_or_after(datetime(2024, 1, 1))
    with pytest.raises(RecurrenceError, match="instant: must be an aware datetime"):
        compiled.iter_from(datetime(2024, 1, 1))  # refused at the call, not at the first next()
    with pytest.raises(RecurrenceError, match="created: must be an aware datetime"):
        plan({}, created=datetime(2024, 1, 1))


def test_describe_gives_local_time_without_marks_outside_dst_changes() -> None:
    compiled = plan(
        {
            "startTime": "2024-06-03T09:00:00",
            "recurrence": {"frequency": "Day", "timeZone": "Asia/Kolkata"},
        },
        created=NOW,
    )
    occurrence = compiled.describe(utc(2024, 6, 3, 3, 30))
    assert occurrence.local.hour == 9 and occurrence.local.minute == 0
    assert occurrence.wall == datetime(2024, 6, 3, 9, 0)
    assert not occurrence.moved and not occurrence.merged


def test_preview_count_zero_and_recurrence_count() -> None:
    properties = {"recurrence": {"frequency": "Minute", "count": 3}}
    assert preview(properties, now=NOW, count=0) == []
    assert len(preview(properties, now=NOW, count=10)) == 3
    assert len(preview(properties, now=NOW, count=2)) == 2
