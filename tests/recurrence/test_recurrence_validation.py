"""Every limit of design doc §6 is refused with a message naming the field and the rule; Azure's
case-insensitive input is accepted."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from horarium.recurrence import RecurrenceError, parse_instant, plan, preview

NOW = datetime(2024, 1, 1, tzinfo=UTC)


def recurring(frequency: Any = "Day", **fields: Any) -> dict[str, Any]:
    return {"startTime": "2024-01-01T08:00:00Z", "recurrence": {"frequency": frequency, **fields}}


def refused(properties: Any) -> str:
    with pytest.raises(RecurrenceError) as caught:
        plan(properties, created=NOW)
    assert isinstance(caught.value, ValueError)
    return str(caught.value)


BAD: list[tuple[Any, str]] = [
    (
        recurring("Fortnight"),
        "recurrence.frequency: 'Fortnight' is not one of Second, Minute, Hour, Day, Week, Month,"
        " Year",
    ),
    ({"recurrence": {"interval": 2}}, "recurrence.frequency: is required"),
    (recurring(7), "recurrence.frequency: 7 is not one of"),
    (recurring(interval=0), "recurrence.interval: 0 is less than 1"),
    (recurring(interval=-3), "recurrence.interval: -3 is less than 1"),
    (
        recurring("Minute", interval=1001),
        "recurrence.interval: 1001 is more than 1000, the most for Minute",
    ),
    (
        recurring("Hour", interval=1001),
        "recurrence.interval: 1001 is more than 1000, the most for Hour",
    ),
    (recurring("Day", interval=549), "recurrence.interval: 549 is more than 548, the most for Day"),
    (recurring("Week", interval=79), "recurrence.interval: 79 is more than 78, the most for Week"),
    (
        recurring("Month", interval=19),
        "recurrence.interval: 19 is more than 18, the most for Month",
    ),
    (recurring("Year", interval=2), "recurrence.interval: 2 is more than 1, the most for Year"),
    (recurring(interval="2"), "recurrence.interval: '2' is not an integer"),
    (recurring(interval=1.5), "recurrence.interval: 1.5 is not an integer"),
    (recurring(interval=True), "recurrence.interval: must be an integer, not a boolean"),
    (recurring(count=0), "recurrence.count: 0 is less than 1"),
    (recurring(count=-1), "recurrence.count: -1 is less than 1"),
    (recurring(schedule={"hours": [24]}), "recurrence.schedule.hours[0]: 24 is not in 0..23"),
    (recurring(schedule={"hours": [3, -1]}), "recurrence.schedule.hours[1]: -1 is not in 0..23"),
    (
        recurring(schedule={"minutes": [1, 2, 61]}),
        "recurrence.schedule.minutes[2]: 61 is not in 0..59",
    ),
    (recurring(schedule={"minutes": [60]}), "recurrence.schedule.minutes[0]: 60 is not in 0..59"),
    (
        recurring(schedule={"minutes": ["5"]}),
        "recurrence.schedule.minutes[0]: '5' is not an integer",
    ),
    (
        recurring(schedule={"minutes": 5}),
        "recurrence.schedule.minutes: must be a list, not a number",
    ),
    (recurring(schedule={"minutes": []}), "recurrence.schedule.minutes: must not be empty"),
    (
        recurring("Week", schedule={"weekDays": ["Funday"]}),
        "recurrence.schedule.weekDays[0]: 'Funday' is not a day name (Monday..Sunday)",
    ),
    (
        recurring("Week", schedule={"weekDays": ["monday", "Tuesday", "MONDAY"]}),
        "recurrence.schedule.weekDays[2]: 'MONDAY' repeats recurrence.schedule.weekDays[0]",
    ),
    (
        recurring("Week", schedule={"weekDays": ["Monday"] * 8}),
        "recurrence.schedule.weekDays: 8 days given, at most 7",
    ),
    (
        recurring("Month", schedule={"monthDays": [0]}),
        "recurrence.schedule.monthDays[0]: 0 is not in -31..-1 or 1..31",
    ),
    (
        recurring("Month", schedule={"monthDays": [1, 32]}),
        "recurrence.schedule.monthDays[1]: 32 is not in -31..-1 or 1..31",
    ),
    (
        recurring("Month", schedule={"monthDays": [-32]}),
        "recurrence.schedule.monthDays[0]: -32 is not in -31..-1 or 1..31",
    ),
    (
        recurring("Month", schedule={"monthlyOccurrences": [{"occurrence": 1}]}),
        "recurrence.schedule.monthlyOccurrences[0].day: is required",
    ),
    (
        recurring("Month", schedule={"monthlyOccurrences": [{"day": "friday", "occurrence": 6}]}),
        "recurrence.schedule.monthlyOccurrences[0].occurrence: 6 is not in -5..-1 or 1..5",
    ),
    (
        recurring("Month", schedule={"monthlyOccurrences": [{"day": "friday", "Occurrence": 0}]}),
        "recurrence.schedule.monthlyOccurrences[0].occurrence: 0 is not in -5..-1 or 1..5",
    ),
    (
        recurring(
            "Month",
            schedule={
                "monthlyOccurrences": [{"day": "Monday"}, {"day": "friday", "occurrence": -6}]
            },
        ),
        "recurrence.schedule.monthlyOccurrences[1].occurrence: -6 is not in -5..-1 or 1..5",
    ),
    (
        recurring("Month", schedule={"monthlyOccurrences": [{"day": "fri"}]}),
        "recurrence.schedule.monthlyOccurrences[0].day: 'fri' is not a day name",
    ),
    (
        recurring("Month", schedule={"monthlyOccurrences": [{"day": "friday", "week": 2}]}),
        "recurrence.schedule.monthlyOccurrences[0].week: is not a known field",
    ),
    (
        recurring("Month", schedule={"monthlyOccurrences": ["friday"]}),
        "recurrence.schedule.monthlyOccurrences[0]: must be an object, not a string",
    ),
    (recurring(schedule={}), "recurrence.schedule: must not be empty"),
    (recurring(schedule={"hours": None}), "recurrence.schedule: must not be empty"),
    (recurring(schedule=[1]), "recurrence.schedule: must be an object, not a list"),
    (
        recurring("Month", schedule={"months": [1]}),
        "recurrence.schedule.months: is not a known field (known: minutes, hours, weekDays, "
        "monthDays, monthlyOccurrences)",
    ),
    (
        recurring("Minute", schedule={"minutes": [5]}),
        "recurrence.schedule.minutes: is not allowed with frequency Minute "
        "(no schedule is allowed)",
    ),
    (
        recurring("Hour", schedule={"hours": [5]}),
        "recurrence.schedule.hours: is not allowed with frequency Hour (allowed: minutes)",
    ),
    (
        recurring("Day", schedule={"weekDays": ["monday"]}),
        "recurrence.schedule.weekDays: is not allowed with frequency Day (allowed: hours, minutes)",
    ),
    (
        recurring("Week", schedule={"monthDays": [1]}),
        "recurrence.schedule.monthDays: is not allowed with frequency Week",
    ),
    (
        recurring("Month", schedule={"weekDays": ["Saturday"], "monthDays": [8]}),
        "recurrence.schedule.weekDays: is not allowed with frequency Month",
    ),
    (
        recurring("Year", schedule={"monthDays": [1]}),
        "recurrence.schedule.monthDays: is not allowed with frequency Year "
        "(allowed: hours, minutes)",
    ),
    (
        recurring("Day", schedule={"monthlyOccurrences": [{"day": "friday"}]}),
        "recurrence.schedule.monthlyOccurrences: is not allowed with frequency Day",
    ),
    (recurring(startTime="2024-01-01"), "recurrence.startTime: is not a known field"),
    (
        recurring(timeZone="Mars/Olympus_Mons"),
        "recurrence.timeZone: 'Mars/Olympus_Mons' is not a known IANA or Windows time zone",
    ),
    (recurring(timeZone=1), "recurrence.timeZone: must be a string, not a number"),
    (
        recurring(endTime="next tuesday"),
        "recurrence.endTime: 'next tuesday' is not an ISO 8601 date-time",
    ),
    (recurring(endTime=20240101), "recurrence.endTime: must be an ISO 8601 date-time string"),
    (
        {"startTime": "2024-13-01T00:00:00Z"},
        "startTime: '2024-13-01T00:00:00Z' is not an ISO 8601 date-time",
    ),
    (
        {"startTime": "1000-01-01T00:00:00Z"},
        "startTime: 1000-01-01T00:00:00Z is outside 1900-01-01",
    ),
    ({"startTime": "9999-12-31T00:00:00Z"}, "startTime: 9999-12-31T00:00:00Z is outside"),
    ({"recurrence": "daily"}, "recurrence: must be an object, not a string"),
    ([], "properties: must be an object, not a list"),
    (
        recurring(frequency="Day", Frequency="Week"),
        "recurrence.Frequency: conflicts with 'frequency'",
    ),
]


@pytest.mark.parametrize(("properties", "message"), BAD)
def test_bad_input_is_refused_with_field_and_rule(properties: Any, message: str) -> None:
    assert message in refused(properties)


def test_error_carries_the_field_separately() -> None:
    with pytest.raises(RecurrenceError) as caught:
        plan(recurring(schedule={"minutes": [1, 2, 61]}), created=NOW)
    assert caught.value.field == "recurrence.schedule.minutes[2]"
    assert caught.value.rule == "61 is not in 0..59"


def test_preview_refuses_a_naive_now() -> None:
    with pytest.raises(RecurrenceError, match="now: must be an aware datetime"):
        preview(recurring(), now=datetime(2024, 1, 1))


@pytest.mark.parametrize("frequency", ["week", "Week", "WEEK", " week "])
def test_frequency_is_case_insensitive(frequency: str) -> None:
    runs = preview(recurring(frequency), now=NOW, count=2)
    assert runs[1] - runs[0] == datetime(2024, 1, 8) - datetime(2024, 1, 1)


def test_property_names_and_day_names_are_case_insensitive() -> None:
    lower = {
        "startTime": "2024-01-01T08:00:00Z",
        "recurrence": {
            "frequency": "month",
            "schedule": {"monthlyOccurrences": [{"day": "friday", "occurrence": 1}], "hours": [5]},
        },
    }
    mixed = {
        "StartTime": "2024-01-01T08:00:00Z",
        "Recurrence": {
            "Frequency": "MONTH",
            "Schedule": {"MonthlyOccurrences": [{"Day": "FRIDAY", "Occurrence": 1}], "HOURS": [5]},
        },
    }
    assert preview(lower, now=NOW, count=3) == preview(mixed, now=NOW, count=3)
    assert preview(lower, now=NOW, count=1) == [datetime(2024, 1, 5, 5, tzinfo=UTC)]


def test_week_days_in_any_case() -> None:
    properties = recurring("Week", schedule={"weekDays": ["MONDAY", "tuesday", "Wednesday"]})
    runs = preview(properties, now=NOW, count=4)
    assert [r.day for r in runs] == [1, 2, 3, 8]


def test_nulls_count_as_absent_and_other_keys_are_ignored() -> None:
    properties = {
        "startTime": None,
        "action": {"type": "Http"},
        "state": "Enabled",
        "recurrence": {
            "frequency": "Hour",
            "interval": None,
            "count": None,
            "endTime": None,
            "schedule": None,
        },
    }
    assert preview(properties, now=NOW, count=2) == [NOW, datetime(2024, 1, 1, 1, tzinfo=UTC)]


def test_duplicate_hours_and_minutes_are_harmless() -> None:
    properties = recurring(schedule={"hours": [9, 9], "minutes": [0, 0]})
    assert preview(properties, now=NOW, count=2) == [
        datetime(2024, 1, 1, 9, tzinfo=UTC),
        datetime(2024, 1, 2, 9, tzinfo=UTC),
    ]


def test_integral_floats_are_integers() -> None:
    assert preview(recurring(interval=2.0), now=NOW, count=2)[1].day == 3


@pytest.mark.parametrize(
    ("name", "iana"),
    [
        ("W. Europe Standard Time", "Europe/Berlin"),
        ("w. europe standard time", "Europe/Berlin"),
        ("Central Standard Time", "America/Chicago"),
        ("Pacific Standard Time", "America/Los_Angeles"),
        ("India Standard Time", "Asia/Calcutta"),
        ("Europe/Berlin", "Europe/Berlin"),
        ("europe/berlin", "Europe/Berlin"),
        ("UTC", "UTC"),
    ],
)
def test_time_zone_names_iana_and_windows(name: str, iana: str) -> None:
    compiled = plan(recurring(timeZone=name), created=NOW)
    assert compiled.zone.key in (iana, {"Asia/Calcutta": "Asia/Kolkata"}.get(iana, iana))


def test_windows_and_iana_names_give_the_same_runs() -> None:
    windows = recurring(timeZone="W. Europe Standard Time")
    iana = recurring(timeZone="Europe/Berlin")
    windows["startTime"] = iana["startTime"] = "2024-03-30T02:30:00"
    assert preview(windows, now=NOW, count=5) == preview(iana, now=NOW, count=5)


def test_parse_instant_forms() -> None:
    assert parse_instant("2024-07-01T12:00:00Z") == datetime(2024, 7, 1, 12, tzinfo=UTC)
    assert parse_instant("2024-07-01T12:00:00+02:00", "UTC") == datetime(2024, 7, 1, 10, tzinfo=UTC)
    assert parse_instant("2024-07-01T12:00:00", "Europe/Berlin") == datetime(
        2024, 7, 1, 10, tzinfo=UTC
    )
    assert parse_instant("2024-07-01", "W. Europe Standard Time") == datetime(
        2024, 6, 30, 22, tzinfo=UTC
    )
    assert parse_instant("2024-07-01") == datetime(2024, 7, 1, tzinfo=UTC)
    # a nonexistent wall time takes the pre-transition offset (fold=0)
    assert parse_instant("2019-03-10T02:30:00", "America/Chicago") == datetime(
        2019, 3, 10, 8, 30, tzinfo=UTC
    )
    # .NET's seven fractional digits are accepted (truncated to microseconds)
    assert parse_instant("2016-03-30T20:40:55.4695071Z").microsecond == 469507
    with pytest.raises(RecurrenceError, match="timeZone: 'Nowhere' is not a known"):
        parse_instant("2024-07-01", "Nowhere")
    with pytest.raises(RecurrenceError, match="value: 'soon' is not an ISO 8601 date-time"):
        parse_instant("soon")


def test_offset_start_time_is_an_instant_even_with_a_zone() -> None:
    properties = recurring(timeZone="America/Chicago")
    properties["startTime"] = "2024-01-01T08:00:00Z"  # 02:00 in Chicago
    runs = preview(properties, now=NOW, count=2)
    assert runs == [datetime(2024, 1, 1, 8, tzinfo=UTC), datetime(2024, 1, 2, 8, tzinfo=UTC)]
