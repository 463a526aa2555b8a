"""Every calendar and schedule the API accepts has a bounded evaluation cost (docs/recurrence.md,
"Limits"): costly iCalendar rules are refused before anything is expanded, long exclusions are
passed over rather than walked, and a search that still needs too many checks stops with an
error naming the limit."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
import recurring_ical_events

from horarium.recurrence import (
    RecurrenceError,
    calendars,
    ical_text,
    ical_work,
    outline,
    plan,
    read_calendar,
    with_calendars,
)
from horarium.recurrence.calendars import (
    ICAL_LAST_YEAR,
    MAX_ICAL_EVENTS,
    MAX_ICAL_PER_YEAR,
    MAX_ICAL_STEPS,
    Zoned,
)
from horarium.recurrence.excluding import MAX_CHECKS
from horarium.recurrence.ical_text import MAX_PARTS
from horarium.recurrence.zones import UTC_ZONE

NOW = datetime(2031, 3, 3, 12, tzinfo=UTC)


def _ical(*events: str) -> str:
    body = "".join(f"BEGIN:VEVENT\nUID:{i}\n{e}END:VEVENT\n" for i, e in enumerate(events))
    return f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//t//EN\n{body}END:VCALENDAR\n"


def _rule(rule: str, start: str = "20300101T090000Z", end: str = "20300101T100000Z") -> str:
    return f"DTSTART:{start}\nDTEND:{end}\nRRULE:{rule}\n"


def _refused(properties: dict[str, Any]) -> str:
    with pytest.raises(RecurrenceError) as refused:
        read_calendar(properties)
    return str(refused.value)


def _daily(start: str, calendar: dict[str, Any], created: datetime) -> Any:
    """The plan of a daily job from `start` that lists `calendar` (as "c")."""
    job = {"startTime": start, "recurrence": {"frequency": "Day", "excludeCalendars": ["c"]}}
    return plan(with_calendars(job, {"c": calendar}), created=created)


@pytest.mark.parametrize("freq", ["SECONDLY", "MINUTELY", "HOURLY"])
def test_an_event_repeating_more_often_than_daily_is_refused(freq: str) -> None:
    message = _refused({"ical": _ical(_rule(f"FREQ={freq}"))})
    assert message.startswith("properties.ical: event 1 (UID 0)"), message
    assert freq in message and "DAILY, WEEKLY, MONTHLY, YEARLY" in message


def test_a_daily_rule_with_many_times_a_day_is_refused_by_its_yearly_count() -> None:
    hours = ",".join(str(h) for h in range(24))
    message = _refused({"ical": _ical(_rule(f"FREQ=DAILY;BYHOUR={hours}"))})
    assert f"more than {MAX_ICAL_PER_YEAR} times a year" in message, message


def test_occurrences_are_counted_across_events() -> None:
    two = _ical(_rule("FREQ=DAILY"), _rule("FREQ=DAILY"))
    assert read_calendar({"ical": two})["ical"] == two
    message = _refused(
        {"ical": _ical(_rule("FREQ=DAILY"), _rule("FREQ=DAILY"), _rule("FREQ=DAILY"))}
    )
    assert "up to event 3" in message, message


def test_too_many_events_are_refused() -> None:
    one = "DTSTART;VALUE=DATE:20300101\nDTEND;VALUE=DATE:20300102\n"
    message = _refused({"ical": _ical(*[one] * (MAX_ICAL_EVENTS + 1))})
    assert f"has {MAX_ICAL_EVENTS + 1} events; at most {MAX_ICAL_EVENTS}" in message


@pytest.mark.parametrize(
    "event",
    [
        "".join(f"X-NOTE-{i}:n\n" for i in range(MAX_PARTS)),  # content lines
        "X-NOTE" + "".join(f";P{i}=v" for i in range(MAX_PARTS)) + ":n\n",  # parameters
        "RRULE:FREQ=DAILY\nEXDATE:" + ",".join(["20310101T090000Z"] * MAX_PARTS) + "\n",  # values
    ],
    ids=["lines", "parameters", "list values"],
)
def test_a_document_of_more_parts_than_the_limit_is_refused_before_it_is_parsed(
    event: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def parse(text: str) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(calendars.icalendar.Calendar, "from_ical", parse)
    message = _refused({"ical": _ical(_rule("FREQ=YEARLY") + event)})
    assert message.startswith("properties.ical: has "), message
    assert f"parts (content lines, parameters and list values); at most {MAX_PARTS}" in message


def test_a_document_just_within_the_parts_is_read() -> None:
    notes = "".join(f"X-NOTE-{i}:n\n" for i in range(MAX_PARTS - 20))
    document = _ical(_rule("FREQ=YEARLY") + notes)
    assert ical_text.parts(ical_text.lines(document)) <= MAX_PARTS
    assert read_calendar({"ical": document})["ical"] == document


def test_a_daily_event_since_1900_is_accepted_but_sixty_yearly_ones_since_year_1_are_not() -> None:
    read_calendar({"ical": _ical(_rule("FREQ=DAILY", "19000101T090000Z", "19000101T100000Z"))})
    old = _rule("FREQ=YEARLY", "00010101T090000Z", "00010101T100000Z")
    message = _refused({"ical": _ical(*[old] * 60)})
    assert f"more than {MAX_ICAL_STEPS} steps" in message and str(ICAL_LAST_YEAR) in message
    assert "RRULE:FREQ=YEARLY (DTSTART 0001-01-01T09:00:00+00:00)" in message, message


# Rules whose filters never match: dateutil would look for their next occurrence up to 9999.
NEVER = [
    "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31",
    "FREQ=DAILY;BYMONTHDAY=40",
    "FREQ=WEEKLY;BYMONTH=2;BYMONTHDAY=30;BYDAY=MO",
    "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31",
    "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
    "FREQ=DAILY;UNTIL=20310101T000000Z;BYMONTH=2;BYMONTHDAY=31",  # UNTIL does not end the search
]


@pytest.mark.parametrize("rule", NEVER)
def test_a_rule_that_never_matches_is_refused_naming_it_and_the_limit(rule: str) -> None:
    message = _refused({"ical": _ical(_rule("FREQ=DAILY"), _rule(rule))})
    assert message.startswith("properties.ical: its recurring events take more than "), message
    assert f"{MAX_ICAL_STEPS} steps" in message and str(ICAL_LAST_YEAR) in message, message
    assert "RRULE:" + rule.split(";")[0] in message and "never or seldom matches" in message


def test_a_rule_that_matches_once_in_twenty_eight_years_is_accepted() -> None:
    leap_monday = (
        "DTSTART;VALUE=DATE:20240101\nDTEND;VALUE=DATE:20240102\n"
        "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO\n"
    )
    calendar = read_calendar({"ical": _ical(leap_monday)})
    series = _daily("2031-01-01T00:00:00Z", calendar, NOW)
    for year in (2044, 2072):  # the 29 Februaries that are Mondays, 28 years apart
        runs = outline(series, datetime(year, 2, 28, tzinfo=UTC), 2)
        assert [r.instant.date().isoformat() if r.instant else None for r in runs] == [
            f"{year}-02-28",
            None,
            f"{year}-03-01",
        ]


def test_expanding_any_year_costs_at_most_what_the_stored_check_counted() -> None:
    document = _ical(
        _rule("FREQ=DAILY", "19000101T090000Z", "19000101T100000Z"),
        _rule("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "19000101T090000Z"),
        _rule("FREQ=MONTHLY;BYDAY=-1FR", "19500101T090000Z"),
    )
    read_calendar({"ical": document})

    def steps(first: date, end: date) -> int:  # what `expanded` counts for the window
        with ical_work.limited(MAX_ICAL_STEPS) as meter:
            events = recurring_ical_events.of(calendars._parsed(document)).between(first, end)
            assert list(events)
        return meter.steps - meter.left

    checked = steps(date(ICAL_LAST_YEAR, 12, 31), date(ICAL_LAST_YEAR + 1, 1, 1))
    assert checked > 1_000_000  # most of the limit: a daily event since 1900
    for year in (1900, 2026, 2060, ICAL_LAST_YEAR):
        assert steps(date(year, 1, 1), date(year + 1, 1, 1)) <= checked, year


def test_a_document_never_checked_is_still_bounded_when_a_job_reads_it() -> None:
    # As one stored before its rules were checked this way: its calendar raises, it does not
    # search to the year 9999.
    never = Zoned("legacy", {"ical": _ical(_rule(NEVER[0]))}, UTC_ZONE)
    with pytest.raises(RecurrenceError) as refused:
        never.spans(datetime(2031, 1, 1, tzinfo=UTC), datetime(2031, 1, 2, tzinfo=UTC))
    assert refused.value.field == "calendars.legacy.ical"
    assert f"more than {MAX_ICAL_STEPS} steps" in refused.value.rule
    # dateutil is left as it was: the next expansion counts afresh and succeeds.
    daily = Zoned("daily", {"ical": _ical(_rule("FREQ=DAILY"))}, UTC_ZONE)
    assert daily.spans(datetime(2031, 1, 1, tzinfo=UTC), datetime(2031, 1, 2, tzinfo=UTC))


def test_events_exclude_nothing_after_the_last_expanded_year() -> None:
    yearly = {"ical": _ical(_rule("FREQ=YEARLY", "20300101T000000Z", "20300102T000000Z"))}
    series = _daily("2099-12-31T00:00:00Z", yearly, datetime(2099, 12, 30, tzinfo=UTC))
    runs = outline(series, datetime(2099, 12, 31, tzinfo=UTC), 3)
    # 2100-01-01 is excluded (the last year expanded); 2101-01-01 is not.
    assert [r.instant.date().isoformat() for r in runs if r.instant] == [
        "2099-12-31",
        "2100-01-02",
        "2100-01-03",
    ]
    later = outline(series, datetime(2100, 12, 31, tzinfo=UTC), 2)
    assert [r.instant.date().isoformat() for r in later if r.instant] == [
        "2100-12-31",
        "2101-01-01",
    ]


def _minute_job(mode: str, calendar: dict[str, Any]) -> Any:
    job = {
        "startTime": "2031-01-01T00:00:00Z",
        "recurrence": {
            "frequency": "Minute",
            "interval": 1,
            "excludeCalendars": ["c"],
            "onExcluded": mode,
        },
    }
    return plan(with_calendars(job, {"c": calendar}), created=NOW)


@pytest.mark.parametrize("mode", ["Skip", "NextBusinessDay", "PreviousBusinessDay"])
def test_a_range_of_seven_thousand_years_is_passed_over_not_walked(mode: str) -> None:
    series = _minute_job(mode, {"ranges": [{"start": "1900-01-01", "end": "8999-01-01"}]})
    end = datetime(8999, 1, 1, tzinfo=UTC)
    # Either the series has ended (excluded for ten years in a row) or it resumes at the end.
    assert series.first is None or series.first >= end
    assert all(r.instant is None or r.instant >= end for r in outline(series, NOW, 100))


def test_a_three_month_range_moves_an_hourly_job_past_its_end() -> None:
    job = {
        "startTime": "2031-01-01T00:00:00Z",
        "recurrence": {
            "frequency": "Hour",
            "excludeCalendars": ["c"],
            "onExcluded": "NextBusinessDay",
        },
    }
    quarter = {"ranges": [{"start": "2031-03-01", "end": "2031-06-01"}]}
    series = plan(with_calendars(job, {"c": quarter}), created=NOW)
    runs = [r for r in outline(series, NOW, 30) if r.instant is not None]
    assert runs[0].instant == datetime(2031, 6, 1, tzinfo=UTC)
    assert len(runs[0].scheduled) == 32  # midnight of May 1-31 (moved) and of June 1, merged


def test_a_search_that_needs_too_many_checks_stops_naming_the_limit() -> None:
    # Every day excluded but two minutes; each excluded minute looks for a free day in vain.
    almost = _rule("FREQ=DAILY", "20300101T000100Z", "20300101T235900Z")
    with pytest.raises(RecurrenceError) as stopped:
        outline(_minute_job("NextBusinessDay", {"ical": _ical(almost)}), NOW, 100)
    assert stopped.value.field == "recurrence.excludeCalendars"
    assert f"more than {MAX_CHECKS} checks" in stopped.value.rule


def _recording_windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[date, date]]:
    """The windows the calendars expand from now on, recorded."""
    windows: list[tuple[date, date]] = []
    expand = calendars.expanded

    def recorded(text: str, first: date, end: date, path: str) -> list[Any]:
        windows.append((first, end))
        return expand(text, first, end, path)

    monkeypatch.setattr(calendars, "expanded", recorded)
    return windows


def test_a_job_listing_a_stored_calendar_compiles_without_expanding_it_to_the_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As stored (its expansion up to 2100 checked then), a text this process has not read.
    document = _ical(_rule("FREQ=YEARLY", "20200101T090000Z", "20200101T100000Z") + "SUMMARY:a\n")
    stored = {"ical": document}
    windows = _recording_windows(monkeypatch)
    series = _daily("2031-01-01T09:00:00Z", stored, datetime(2031, 12, 31, 12, tzinfo=UTC))
    assert series.first == datetime(2032, 1, 2, 9, tzinfo=UTC)  # 1 January is excluded
    assert windows and all(end <= date(2033, 1, 1) for _, end in windows), windows


def test_a_compiled_plan_keeps_the_years_its_calendars_expanded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    document = _ical(_rule("FREQ=YEARLY", "20200101T090000Z", "20200101T100000Z"))
    series = _daily("2031-01-01T09:00:00Z", {"ical": document}, NOW)
    assert series.after(datetime(2032, 6, 1, tzinfo=UTC)) == datetime(2032, 6, 1, 9, tzinfo=UTC)
    windows = _recording_windows(monkeypatch)
    calendars._event_spans.cache_clear()  # as when many other documents pushed the year out
    assert series.after(datetime(2032, 6, 2, tzinfo=UTC)) == datetime(2032, 6, 2, 9, tzinfo=UTC)
    assert windows == []
