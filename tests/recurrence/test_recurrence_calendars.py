"""Exclusion calendars (docs/recurrence.md §8): skipped and moved executions, pure."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from horarium.recurrence import (
    RecurrenceError,
    outline,
    plan,
    preview,
    read_calendar,
    with_calendars,
)

NOW = datetime(2031, 1, 1, tzinfo=UTC)
NEW_YORK = "America/New_York"
WEEKENDS = {"weekends": True}
BUSINESS = {"weekends": True, "holidays": {"country": "US", "subdivision": "NY"}}


def _job(start: str, mode: str = "Skip", zone: str = NEW_YORK, **recurrence: Any) -> dict[str, Any]:
    recurrence.setdefault("frequency", "Day")
    names = recurrence.pop("calendars", ["cal"])
    return {
        "startTime": start,
        "recurrence": {
            **recurrence,
            "timeZone": zone,
            "excludeCalendars": names,
            "onExcluded": mode,
        },
    }


def _local(instants: list[datetime], zone: str = NEW_YORK) -> list[str]:
    return [t.astimezone(ZoneInfo(zone)).strftime("%a %Y-%m-%d %H:%M") for t in instants]


def test_skip_drops_excluded_days_and_count_counts_runs_only() -> None:
    job = _job("2031-01-03T09:00:00", count=3)  # Friday
    found = preview(job, now=NOW, count=10, calendars={"cal": WEEKENDS})
    assert _local(found) == ["Fri 2031-01-03 09:00", "Mon 2031-01-06 09:00", "Tue 2031-01-07 09:00"]


def test_next_business_day_merges_a_weekend_into_monday() -> None:
    job = _job("2031-01-03T09:00:00", "NextBusinessDay")
    series = plan(with_calendars(job, {"cal": WEEKENDS}), created=NOW)
    runs = outline(series, NOW, 3)
    assert [r.instant for r in runs] == preview(job, now=NOW, count=3, calendars={"cal": WEEKENDS})
    monday = runs[1]
    assert _local([monday.instant or NOW]) == ["Mon 2031-01-06 09:00"]
    assert _local(list(monday.scheduled)) == [
        "Sat 2031-01-04 09:00",
        "Sun 2031-01-05 09:00",
        "Mon 2031-01-06 09:00",
    ]
    assert monday.calendar == "cal"
    assert series.after(runs[0].instant or NOW) == monday.instant


def test_the_last_business_day_of_the_month_across_month_ends_and_holidays() -> None:
    job = _job(
        "2031-01-01T00:00:00",
        "PreviousBusinessDay",
        frequency="Month",
        schedule={"monthDays": [-1], "hours": [18], "minutes": [0]},
    )
    found = preview(job, now=NOW, count=12, calendars={"cal": BUSINESS})
    assert _local(found) == [
        "Fri 2031-01-31 18:00",
        "Fri 2031-02-28 18:00",
        "Mon 2031-03-31 18:00",
        "Wed 2031-04-30 18:00",
        "Fri 2031-05-30 18:00",  # the 31st is a Saturday
        "Mon 2031-06-30 18:00",
        "Thu 2031-07-31 18:00",
        "Fri 2031-08-29 18:00",  # the 31st is a Sunday
        "Tue 2031-09-30 18:00",
        "Fri 2031-10-31 18:00",
        "Fri 2031-11-28 18:00",  # the 30th is a Sunday, the 29th a Saturday
        "Wed 2031-12-31 18:00",
    ]


def test_next_business_day_crosses_into_the_next_month() -> None:
    job = _job(
        "2031-05-01T00:00:00",
        "NextBusinessDay",
        frequency="Month",
        schedule={"monthDays": [-1], "hours": [18], "minutes": [0]},
    )
    found = preview(job, now=NOW, count=2, calendars={"cal": BUSINESS})
    assert _local(found) == ["Mon 2031-06-02 18:00", "Mon 2031-06-30 18:00"]


def test_holidays_of_a_country_and_subdivision_are_excluded() -> None:
    job = _job("2031-07-03T09:00:00")  # Independence Day 2031 is a Friday
    found = preview(job, now=NOW, count=2, calendars={"cal": {"holidays": {"country": "US"}}})
    assert _local(found) == ["Thu 2031-07-03 09:00", "Sat 2031-07-05 09:00"]
    # Lincoln's Birthday is a holiday in New York, not in the whole country
    feb = _job("2031-02-12T09:00:00")
    ny = {"holidays": {"country": "US", "subdivision": "NY"}}
    assert _local(preview(feb, now=NOW, count=1, calendars={"cal": ny})) == ["Thu 2031-02-13 09:00"]
    whole = {"holidays": {"country": "US"}}
    assert _local(preview(feb, now=NOW, count=1, calendars={"cal": whole})) == [
        "Wed 2031-02-12 09:00"
    ]


ICAL = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
    "BEGIN:VEVENT\r\nUID:mondays@test\r\nDTSTART;VALUE=DATE:20310106\r\n"
    "RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=3\r\nEND:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:meeting@test\r\nDTSTART:20310108T083000\r\nDTEND:20310108T093000\r\n"
    "END:VEVENT\r\n"
    "END:VCALENDAR\r\n"
)


def test_ical_recurring_all_day_events_and_floating_timed_events_are_excluded() -> None:
    job = _job("2031-01-05T09:00:00", frequency="Week", schedule={"weekDays": ["Monday"]})
    mondays = preview(job, now=NOW, count=2, calendars={"cal": {"ical": ICAL}})
    assert _local(mondays) == ["Mon 2031-01-27 09:00", "Mon 2031-02-03 09:00"]  # 3 skipped
    daily = _job("2031-01-07T09:00:00", count=3)
    found = preview(daily, now=NOW, count=3, calendars={"cal": {"ical": ICAL}})
    # 09:00 on the 8th falls in the floating 08:30-09:30 meeting, read in New York time
    assert _local(found) == ["Tue 2031-01-07 09:00", "Thu 2031-01-09 09:00", "Fri 2031-01-10 09:00"]
    earlier = _job("2031-01-07T08:00:00", count=2)
    assert _local(preview(earlier, now=NOW, count=2, calendars={"cal": {"ical": ICAL}})) == [
        "Tue 2031-01-07 08:00",
        "Wed 2031-01-08 08:00",  # before the meeting
    ]


def _meeting(tzid: str, *time_zones: str) -> str:
    """A document with a meeting on 2031-01-08 from 09:00 to 10:00 in `tzid`."""
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n"
        + "".join(time_zones)
        + "BEGIN:VEVENT\r\nUID:meeting@test\r\n"
        f"DTSTART;TZID={tzid}:20310108T090000\r\nDTEND;TZID={tzid}:20310108T100000\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def _time_zone(tzid: str, begin: str = "BEGIN:VTIMEZONE\r\n") -> str:
    """A VTIMEZONE 14 hours ahead of UTC, with a rule that never matches."""
    return (
        f"{begin}TZID:{tzid}\r\nBEGIN:STANDARD\r\nDTSTART:16010101T000000\r\n"
        "TZOFFSETFROM:+1400\r\nTZOFFSETTO:+1400\r\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31\r\n"
        "END:STANDARD\r\nEND:VTIMEZONE\r\n"
    )


def _berlin_nine_oclock(document: str) -> list[str]:
    daily = _job("2031-01-07T09:00:00", zone="Europe/Berlin", count=3)
    found = preview(daily, now=NOW, count=3, calendars={"cal": {"ical": document}})
    return _local(found, "Europe/Berlin")


def test_a_tzid_is_read_as_a_zone_name_and_no_document_redefines_it() -> None:
    outlook = "W. Europe Standard Time"  # Outlook's name for Berlin's zone
    runs = ["Tue 2031-01-07 09:00", "Thu 2031-01-09 09:00", "Fri 2031-01-10 09:00"]  # not the 8th
    # The document's own definition of the zone (14 hours ahead, folded or not) is not read...
    assert _berlin_nine_oclock(_meeting(outlook, _time_zone(outlook))) == runs
    folded = _time_zone(outlook, begin="BEGIN:VTIME\r\n ZONE\r\n")
    assert _berlin_nine_oclock(_meeting(outlook, folded)) == runs
    # ...nor kept for the next document that names the same zone.
    assert _berlin_nine_oclock(_meeting(outlook)) == runs
    assert _berlin_nine_oclock(_meeting("Europe/Berlin", _time_zone("Europe/Berlin"))) == runs


def test_a_tzid_that_names_no_zone_is_refused_even_with_its_definition() -> None:
    with pytest.raises(RecurrenceError) as refused:
        read_calendar({"ical": _meeting("Custom/Office", _time_zone("Custom/Office"))})
    assert refused.value.field == "properties.ical: event 1 (UID meeting@test)"
    assert "TZID 'Custom/Office' names no time zone" in refused.value.rule


def test_a_range_excludes_its_span_read_on_the_job_wall_clock() -> None:
    closed = {"ranges": [{"start": "2031-01-03T12:00:00", "end": "2031-01-06"}]}
    twice = _job("2031-01-03T09:00:00", frequency="Hour", interval=12)
    found = preview(twice, now=NOW, count=3, calendars={"cal": closed})
    assert _local(found) == ["Fri 2031-01-03 09:00", "Mon 2031-01-06 09:00", "Mon 2031-01-06 21:00"]
    utc = _job("2031-01-03T09:00:00", zone="UTC")
    assert _local(preview(utc, now=NOW, count=2, calendars={"cal": closed}), "UTC") == [
        "Fri 2031-01-03 09:00",
        "Mon 2031-01-06 09:00",
    ]


def test_a_move_onto_a_daylight_saving_gap_is_marked() -> None:
    # US clocks spring forward on Sunday 2031-03-09 at 02:00: 02:30 does not exist.
    job = _job("2031-03-08T02:30:00", "PreviousBusinessDay")
    calendars = {"cal": {"dates": ["2031-03-10"]}}
    series = plan(with_calendars(job, calendars), created=NOW)
    found = list(outline(series, NOW, 3))
    assert [r.instant and r.instant.isoformat() for r in found] == [
        "2031-03-08T07:30:00+00:00",
        "2031-03-09T07:30:00+00:00",  # Sunday 03:30 EDT, with Monday's 02:30 merged into it
        "2031-03-11T06:30:00+00:00",
    ]
    sunday = series.describe(found[1].instant or NOW)
    assert sunday.moved and sunday.wall.strftime("%H:%M") == "02:30"
    assert sunday.local.strftime("%H:%M %Z") == "03:30 EDT"
    assert found[1].calendar == "cal" and len(found[1].scheduled) == 2


def test_moves_never_run_before_the_first_execution_nor_at_or_after_end_time() -> None:
    job = _job("2031-01-04T09:00:00", "PreviousBusinessDay", endTime="2031-01-11T00:00:00")
    series = plan(with_calendars(job, {"cal": WEEKENDS}), created=NOW)
    runs = outline(series, NOW, 10)
    # Saturday 4th and Sunday 5th would move to Friday 3rd, before startTime: skipped.
    assert [(r.instant is None, _local(list(r.scheduled))[0]) for r in runs[:3]] == [
        (True, "Sat 2031-01-04 09:00"),
        (True, "Sun 2031-01-05 09:00"),
        (False, "Mon 2031-01-06 09:00"),
    ]
    assert _local([r.instant for r in runs if r.instant]) == [
        "Mon 2031-01-06 09:00",
        "Tue 2031-01-07 09:00",
        "Wed 2031-01-08 09:00",
        "Thu 2031-01-09 09:00",
        "Fri 2031-01-10 09:00",
    ]
    forward = _job("2031-01-09T09:00:00", "NextBusinessDay", endTime="2031-01-12T00:00:00")
    found = preview(forward, now=NOW, count=10, calendars={"cal": WEEKENDS})
    assert _local(found) == ["Thu 2031-01-09 09:00", "Fri 2031-01-10 09:00"]  # 11th: past end


def test_a_schedule_every_execution_of_which_is_excluded_ends() -> None:
    job = _job("2031-01-04T09:00:00", frequency="Week", schedule={"weekDays": ["Saturday"]})
    series = plan(with_calendars(job, {"cal": WEEKENDS}), created=NOW)
    assert series.first is None
    assert preview(job, now=NOW, calendars={"cal": WEEKENDS}) == []


def test_a_long_range_is_skipped_at_once_even_every_minute() -> None:
    closed = {"ranges": [{"start": "2031-01-01T00:00:00Z", "end": "2033-01-01T00:00:00Z"}]}
    job = {"recurrence": {"frequency": "Minute", "excludeCalendars": ["closed"]}}
    found = preview(job, now=NOW, count=2, calendars={"closed": closed})
    assert found == [datetime(2033, 1, 1, tzinfo=UTC), datetime(2033, 1, 1, 0, 1, tzinfo=UTC)]


def test_a_job_without_calendars_plans_as_before() -> None:
    job = {"startTime": "2031-01-03T09:00:00", "recurrence": {"frequency": "Day"}}
    assert preview(job, now=NOW, count=3, calendars={"cal": WEEKENDS}) == preview(
        job, now=NOW, count=3
    )


@pytest.mark.parametrize(
    ("recurrence", "field"),
    [
        ({"excludeCalendars": ["other"]}, "recurrence.excludeCalendars[0]"),
        ({"excludeCalendars": []}, "recurrence.excludeCalendars"),
        ({"excludeCalendars": ["cal", "CAL"]}, "recurrence.excludeCalendars[1]"),
        ({"excludeCalendars": ["cal"], "onExcluded": "Later"}, "recurrence.onExcluded"),
    ],
)
def test_invalid_exclusions_name_the_field(recurrence: dict[str, Any], field: str) -> None:
    job = {"recurrence": {"frequency": "Day", **recurrence}}
    with pytest.raises(RecurrenceError) as caught:
        preview(job, now=NOW, calendars={"cal": WEEKENDS})
    assert caught.value.field == field


def test_a_calendar_given_to_preview_is_validated() -> None:
    job = _job("2031-01-03T09:00:00")
    with pytest.raises(RecurrenceError) as caught:
        preview(job, now=NOW, calendars={"cal": {"dates": ["someday"]}})
    assert caught.value.field == "calendars.cal.dates[0]"
    assert read_calendar({"Dates": ["2031-01-02", "2031-01-01"], "WEEKENDS": False}) == {
        "dates": ["2031-01-01", "2031-01-02"],
        "weekends": False,
    }
