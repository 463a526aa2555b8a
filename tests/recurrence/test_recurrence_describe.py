"""`describe`: every kind of recurrence in plain English, against a table of cases."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from horarium.recurrence import RecurrenceError, describe

CREATED = datetime(2031, 1, 1, 12, 25, tzinfo=UTC)  # a Wednesday
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

CASES: list[tuple[dict[str, Any], str]] = [
    # one-time jobs
    ({}, "once, at once"),
    ({"startTime": "2031-01-06T09:00:00"}, "once at 2031-01-06 09:00 UTC"),
    # elapsed time: Minute and Hour without schedule
    ({"recurrence": {"frequency": "Minute"}}, "every minute"),
    (
        {"recurrence": {"frequency": "Minute", "interval": 15}},
        "every 15 minutes from 2031-01-01 12:25 UTC",
    ),
    (
        {"startTime": "2031-01-06T09:07:00Z", "recurrence": {"frequency": "Hour", "interval": 2}},
        "every 2 hours from 2031-01-06 09:07 UTC",
    ),
    (
        {"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0, 30]}}},
        "every hour at :00 and :30 UTC",
    ),
    # Day: the example of the issue ("every day at hours 7 at minutes 0" before)
    (
        {"recurrence": {"frequency": "Day", "schedule": {"hours": [7], "minutes": [0]}}},
        "every day at 07:00 UTC",
    ),
    (
        {"recurrence": {"frequency": "Day", "schedule": {"hours": [7, 19]}}},
        "every day at 07:25 and 19:25 UTC",
    ),
    (
        {"recurrence": {"frequency": "Day", "schedule": {"minutes": [0, 15, 30, 45]}}},
        "every 15 minutes UTC",
    ),
    (
        {"recurrence": {"frequency": "Day", "interval": 3, "timeZone": "W. Europe Standard Time"}},
        "every 3 days at 13:25 Europe/Berlin",
    ),
    # Week
    (
        {
            "startTime": "2031-01-06T09:15:00",
            "recurrence": {
                "frequency": "Week",
                "timeZone": "Europe/Paris",
                "schedule": {"weekDays": WEEKDAYS, "hours": [9], "minutes": [15]},
            },
        },
        "weekdays at 09:15 Europe/Paris",
    ),
    (
        {"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["saturday", "sunday"]}}},
        "weekends at 12:25 UTC",
    ),
    (
        {"recurrence": {"frequency": "Week", "interval": 2}},
        "every 2 weeks on Wednesdays at 12:25 UTC",
    ),
    (
        {
            "recurrence": {
                "frequency": "Week",
                "schedule": {"weekDays": ["Tuesday", "Thursday"], "hours": [17], "minutes": [5]},
            }
        },
        "Tuesdays and Thursdays at 17:05 UTC",
    ),
    # Month
    (
        {
            "recurrence": {
                "frequency": "Month",
                "schedule": {"monthDays": [-1, 1], "hours": [6], "minutes": [0]},
            }
        },
        "the 1st and the last day of every month at 06:00 UTC",
    ),
    (
        {
            "recurrence": {
                "frequency": "Month",
                "interval": 2,
                "schedule": {"monthlyOccurrences": [{"day": "Friday", "occurrence": -3}]},
            }
        },
        "the third-to-last Friday of every 2 months at 12:25 UTC",
    ),
    (
        {
            "recurrence": {
                "frequency": "Month",
                "schedule": {
                    "minutes": [15, 45],
                    "hours": [5, 17],
                    "monthlyOccurrences": [{"day": "wednesday", "occurrence": 3}],
                },
            }
        },
        "the third Wednesday of every month at 05:15, 05:45, 17:15 and 17:45 UTC",
    ),
    (
        {"startTime": "2031-01-31T18:00:00Z", "recurrence": {"frequency": "Month"}},
        "the 31st of every month (the last day in shorter months) at 18:00 UTC",
    ),
    (
        {
            "startTime": "2031-01-31T18:00:00Z",
            "recurrence": {"frequency": "Month", "schedule": {"hours": [8]}},
        },
        "the 31st of every month at 08:00 UTC",
    ),
    (
        {
            "recurrence": {
                "frequency": "Month",
                "schedule": {"monthlyOccurrences": [{"day": "Friday"}]},
            }
        },
        "Fridays at 12:25 UTC",
    ),
    # Year: the anchor's date
    (
        {"startTime": "2031-03-05T10:00:00Z", "recurrence": {"frequency": "Year"}},
        "every year on 5 March at 10:00 UTC",
    ),
    # cron
    (
        {"recurrence": {"cron": "*/15 9-17 * * MON-FRI", "timeZone": "Europe/Berlin"}},
        "weekdays, every 15 minutes from 09:00 to 17:45 Europe/Berlin",
    ),
    ({"recurrence": {"cron": "@hourly"}}, "every hour at :00 UTC"),
    ({"recurrence": {"cron": "30 18 L * *"}}, "the last day of the month at 18:30 UTC"),
    ({"recurrence": {"cron": "0 0 13 * FRI"}}, "the 13th of the month and Fridays at 00:00 UTC"),
    (
        {"recurrence": {"cron": "0 0 */10 * MON"}},
        "Mondays that fall on the 1st, 11th, 21st or 31st at 00:00 UTC",
    ),
    (
        {"recurrence": {"cron": "0 9 * * MON#2,5L"}},
        "the last Friday and the second Monday of the month at 09:00 UTC",
    ),
    (
        {"recurrence": {"cron": "0 9 15W 1,7 *"}},
        "the weekday nearest the 15th of the month in January and July at 09:00 UTC",
    ),
    # calendars, jitter, count, end time
    (
        {
            "startTime": "2031-01-06T09:15:00",
            "recurrence": {
                "frequency": "Week",
                "timeZone": "Europe/Paris",
                "schedule": {"weekDays": WEEKDAYS, "hours": [9], "minutes": [15]},
                "excludeCalendars": ["business"],
                "onExcluded": "NextBusinessDay",
            },
            "resolvedCalendars": {"Business": {"holidays": {"country": "FR"}, "weekends": True}},
        },
        "weekdays at 09:15 Europe/Paris, except business (weekends, holidays FR);"
        " moved to the next business day",
    ),
    (
        {
            "recurrence": {
                "cron": "0 18 * * *",
                "excludeCalendars": ["closures", "audit"],
                "onExcluded": "previousbusinessday",
            },
            "resolvedCalendars": {
                "closures": {"dates": ["2031-12-24", "2031-12-31"], "ical": "BEGIN:VCALENDAR"},
                "audit": {"ranges": [{"start": "2031-02-01", "end": "2031-02-03"}]},
            },
        },
        "every day at 18:00 UTC, except closures (2 dates, iCalendar events) and audit (1 range);"
        " moved to the previous business day",
    ),
    (
        {"recurrence": {"cron": "0 18 * * *", "excludeCalendars": ["holidays"]}},
        "every day at 18:00 UTC, except holidays",
    ),
    (
        {
            "recurrence": {
                "cron": "0 9 * * *",
                "timeZone": "America/New_York",
                "jitter": "PT5M",
                "count": 10,
                "endTime": "2032-01-01T05:00:00Z",
            }
        },
        "every day at 09:00 America/New_York; each run starts up to 5 minutes late (jitter);"
        " 10 times; until 2032-01-01 00:00",
    ),
    (
        {"recurrence": {"frequency": "Day", "count": 1, "jitter": "01:30:00"}},
        "every day at 12:25 UTC; each run starts up to 1 hour 30 minutes late (jitter); once only",
    ),
]


@pytest.mark.parametrize(("properties", "expected"), CASES, ids=[c[1][:50] for c in CASES])
def test_describe_tells_each_recurrence_in_plain_english(
    properties: dict[str, Any], expected: str
) -> None:
    assert describe(properties, created=CREATED) == expected


def test_without_created_the_anchor_time_is_named_not_made_up() -> None:
    weekly = {"recurrence": {"frequency": "Week", "interval": 2}}
    assert describe(weekly) == (
        "every 2 weeks on the weekday it was created at the time of day it was created (UTC)"
    )


def test_calendars_given_by_name_replace_the_resolved_copies() -> None:
    job = {"recurrence": {"cron": "0 9 * * *", "excludeCalendars": ["off"]}}
    told = describe(job, created=CREATED, calendars={"OFF": {"weekends": True}})
    assert told == "every day at 09:00 UTC, except off (weekends)"


def test_invalid_timing_is_the_recurrence_error_of_plan() -> None:
    with pytest.raises(RecurrenceError) as caught:
        describe({"recurrence": {"frequency": "Day", "schedule": {"hours": [24]}}})
    assert caught.value.field == "recurrence.schedule.hours[0]"
