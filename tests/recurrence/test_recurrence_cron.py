"""`recurrence.cron` (docs/recurrence.md §9) against croniter, an independent implementation.

croniter walks the wall clock; Horarium resolves each wall-clock time with the rules of §4
(fold=0, duplicates once). So on random expressions and zones, Horarium's instants are exactly
croniter's naive wall-clock times resolved that way; where croniter's own daylight-saving
handling or syntax rules differ, a test below names the difference and pins Horarium's side.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from itertools import islice, pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from croniter import CroniterBadDateError, croniter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from horarium.recurrence import RecurrenceError, cron_shortest_gap, plan, preview

NOW = datetime(2024, 1, 1, tzinfo=UTC)
# Zones with DST gaps and overlaps, a 30-minute shift, and days near their transitions.
TRANSITIONS = {
    "UTC": [datetime(2023, 6, 15)],
    "Asia/Kolkata": [datetime(2023, 6, 15)],
    "Europe/Berlin": [datetime(2019, 3, 31), datetime(2019, 10, 27)],
    "America/New_York": [datetime(2024, 3, 10), datetime(2024, 11, 3)],
    "Australia/Lord_Howe": [datetime(2019, 4, 7), datetime(2019, 10, 6)],
    "America/Santiago": [datetime(2019, 4, 7), datetime(2019, 9, 8)],
}
MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]


def cron(expression: str, zone: str = "UTC", **more: Any) -> dict[str, Any]:
    return {"recurrence": {"cron": expression, "timeZone": zone, **more}}


def runs(expression: str, now: datetime, count: int = 6, zone: str = "UTC") -> list[str]:
    found = preview(cron(expression, zone), now=now, count=count)
    local = ZoneInfo(zone)
    return [t.astimezone(local).strftime("%a %Y-%m-%d %H:%M %Z") for t in found]


# --- random expressions against croniter ----------------------------------------------------


def _values(low: int, high: int, names: list[str] | None = None) -> st.SearchStrategy[str]:
    def shown(n: int) -> st.SearchStrategy[str]:
        if names is None:
            return st.just(str(n))
        return st.sampled_from([str(n), names[n - low], names[n - low].lower()])

    def ranged(pair: tuple[int, int]) -> st.SearchStrategy[str]:
        a, b = sorted(pair)
        return st.tuples(shown(a), shown(b)).map("-".join)

    # croniter reads a range of one value (`1-1`) as `*`: ranges here have two values or more.
    single = st.integers(low, high).flatmap(shown)
    span = _pairs(low, high).flatmap(ranged)
    step = st.integers(1, max(1, (high - low) // 2))
    return st.one_of(
        single,
        span,
        st.tuples(span, step).map(lambda p: f"{p[0]}/{p[1]}"),
        step.map(lambda s: f"*/{s}"),
        st.tuples(single, step).map(lambda p: f"{p[0]}/{p[1]}"),
    )


def _pairs(low: int, high: int) -> st.SearchStrategy[tuple[int, int]]:
    return st.tuples(st.integers(low, high), st.integers(low, high)).filter(lambda p: p[0] != p[1])


def _field(item: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.just("*"), st.lists(item, min_size=1, max_size=3).map(",".join), item)


# Day-of-month items croniter reads as Horarium does: `L`, and `nW` for n ≤ 28 (croniter moves
# a 29th–31st the month lacks to its last day; Horarium skips such months, as for plain days).
DOM_ITEM = st.one_of(
    st.integers(1, 31).map(str),
    _pairs(1, 31).map(lambda p: f"{min(p)}-{max(p)}"),
    st.just("L"),
)
DOM_W = st.integers(1, 28).map(lambda n: f"{n}W")
DOW_PLAIN = _values(0, 6, DAYS)
DOW_SPECIAL = st.one_of(
    st.tuples(st.sampled_from(DAYS), st.integers(1, 5)).map(lambda p: f"{p[0]}#{p[1]}"),
    st.integers(0, 6).map(lambda n: f"{n}L"),
)


@st.composite
def expressions(draw: st.DrawFn) -> tuple[str, str]:
    """(Horarium's text, croniter's text): the same schedule in both dialects."""
    minute = draw(_field(_values(0, 59)))
    hour = draw(_field(_values(0, 23)))
    month = draw(_field(_values(1, 12, MONTHS)))
    kind = draw(st.sampled_from(["dom", "dow", "both", "w", "special", "star"]))
    dom, dow = "*", "*"
    if kind in ("dom", "both"):
        dom = draw(st.lists(DOM_ITEM, min_size=1, max_size=3).map(",".join))
    if kind in ("dow", "both"):
        dow = draw(st.lists(DOW_PLAIN, min_size=1, max_size=2).map(",".join))
        if dow.startswith("*"):  # `*/2` restricts yet counts as `*` for Vixie (tested below)
            dow = "1-5"
    if kind == "w":
        dom = draw(DOM_W)  # croniter ignores the day of week next to `W`: only with `*`
    if kind == "special":  # croniter refuses `#` / `L` next to a restricted day of month
        dow = draw(st.lists(DOW_SPECIAL, min_size=1, max_size=2).map(",".join))
    ours = f"{minute} {hour} {dom} {month} {dow}"
    theirs_dow = ",".join(f"L{i[:-1]}" if i.endswith("L") else i for i in dow.split(","))
    return ours, f"{minute} {hour} {dom} {month} {theirs_dow}"  # croniter writes 5L as L5


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, str, str, datetime]:
    ours, theirs = draw(expressions())
    zone = draw(st.sampled_from(list(TRANSITIONS)))
    base = draw(st.sampled_from(TRANSITIONS[zone]))
    wall = base + timedelta(minutes=draw(st.integers(-3 * 1440, 3 * 1440)))
    if draw(st.booleans()):
        wall += timedelta(seconds=draw(st.integers(0, 59)), microseconds=7)
    t = wall.replace(tzinfo=ZoneInfo(zone)).astimezone(UTC)
    return ours, theirs, zone, t


def croniter_resolved(
    theirs: str, zone: ZoneInfo, t: datetime, horizon: timedelta
) -> list[datetime]:
    """croniter's naive wall-clock times from a little before `t`, each resolved as §4 says
    (fold=0, equal instants once), sorted, at or after `t` and before `t + horizon`."""
    # The zones here shift by an hour at most: walls 3 hours either side cover every instant.
    start = t.astimezone(zone).replace(tzinfo=None) - timedelta(hours=3, seconds=1)
    last = (t + horizon).astimezone(zone).replace(tzinfo=None) + timedelta(hours=3)
    walls = croniter(theirs, start)
    found: set[datetime] = set()
    while True:
        try:
            wall = walls.get_next(datetime)
        except CroniterBadDateError:  # croniter gives up after some years without a match
            break
        if wall > last:
            break
        instant = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
        if t <= instant < t + horizon:
            found.add(instant)
    return sorted(found)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases())
def test_cron_agrees_with_croniter_resolved_on_the_wall_clock(
    case: tuple[str, str, str, datetime],
) -> None:
    ours, theirs, zone_name, t = case
    zone = ZoneInfo(zone_name)
    compiled = plan(cron(ours, zone_name), created=t)
    got = list(islice(compiled.iter_from(t), 8))
    # A horizon that holds the 8 runs, and at most a day of a dense expression.
    horizon = timedelta(days=1) if not got or got[-1] - t < timedelta(days=1) else got[-1] - t
    horizon = min(horizon, timedelta(days=3 * 366))
    expected = croniter_resolved(theirs, zone, t, horizon + timedelta(microseconds=1))
    assert [g for g in got if g - t <= horizon] == expected[:8], (ours, theirs, zone_name)
    if got:
        assert compiled.first == got[0]
        assert compiled.at_or_after(t) == got[0]
        for a, b in pairwise(got):
            assert compiled.after(a) == b


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions())
def test_utc_instants_equal_croniters_exactly(pair: tuple[str, str]) -> None:
    ours, theirs = pair
    start = datetime(2023, 12, 30, 17, 3, tzinfo=UTC)
    got = list(islice(plan(cron(ours), created=start).iter_from(start), 10))
    walls = croniter(theirs, start - timedelta(microseconds=1))
    assert got == [walls.get_next(datetime) for _ in got], (ours, theirs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions())
def test_shortest_gap_is_never_more_than_a_real_gap(pair: tuple[str, str]) -> None:
    ours, _ = pair
    gap = cron_shortest_gap(ours)
    found = list(islice(plan(cron(ours), created=NOW).iter_from(NOW), 200))
    assert all(b - a >= gap for a, b in pairwise(found)), ours
    assert gap >= timedelta(minutes=1)


# --- deliberate differences from croniter -----------------------------------------------------


def test_spring_forward_runs_where_the_earlier_offset_puts_the_wall_time() -> None:
    """02:30 does not exist on 2024-03-10 in New York: §4 runs it at 03:30 EDT (07:30Z, the UTC
    time of the day before); croniter runs it at 03:00."""
    now = datetime(2024, 3, 9, 12, tzinfo=UTC)
    assert runs("30 2 * * *", now, 3, "America/New_York") == [
        "Sun 2024-03-10 03:30 EDT",
        "Mon 2024-03-11 02:30 EDT",
        "Tue 2024-03-12 02:30 EDT",
    ]
    theirs = croniter("30 2 * * *", now.astimezone(ZoneInfo("America/New_York")))
    assert theirs.get_next(datetime).strftime("%H:%M") == "03:00"


def test_fall_back_runs_a_repeated_time_once() -> None:
    """01:30 happens twice on 2024-11-03 in New York: it runs once, at the first (EDT);
    croniter runs it twice."""
    now = datetime(2024, 11, 2, 12, tzinfo=UTC)
    assert runs("30 1 * * *", now, 3, "America/New_York") == [
        "Sun 2024-11-03 01:30 EDT",
        "Mon 2024-11-04 01:30 EST",
        "Tue 2024-11-05 01:30 EST",
    ]
    theirs = croniter("30 1 * * *", now.astimezone(ZoneInfo("America/New_York")))
    assert [theirs.get_next(datetime).utcoffset() for _ in range(3)] == [
        timedelta(hours=-4),
        timedelta(hours=-5),
        timedelta(hours=-5),
    ]


def test_fall_back_does_not_repeat_a_wildcard_hour() -> None:
    """Every 30 minutes across the fall-back: the wall times 01:00 and 01:30 run once (EDT),
    so the repeated hour is skipped; croniter (and Vixie cron) run them in both passes."""
    now = datetime(2024, 11, 3, 4, 15, tzinfo=UTC)  # 00:15 EDT
    assert runs("*/30 * * * *", now, 4, "America/New_York") == [
        "Sun 2024-11-03 00:30 EDT",
        "Sun 2024-11-03 01:00 EDT",
        "Sun 2024-11-03 01:30 EDT",
        "Sun 2024-11-03 02:00 EST",
    ]


def test_a_star_with_a_step_counts_as_star_for_the_day_rule() -> None:
    """Vixie cron: a day field starting with `*` is unrestricted, so `*/10` and MON must both
    match (croniter takes either)."""
    assert runs("0 0 */10 * MON", NOW, 4) == [
        "Mon 2024-01-01 00:00 UTC",
        "Mon 2024-03-11 00:00 UTC",
        "Mon 2024-04-01 00:00 UTC",
        "Mon 2024-07-01 00:00 UTC",
    ]
    theirs = croniter("0 0 */10 * MON", NOW)
    assert theirs.get_next(datetime).day == 8  # a Monday not on 1, 11, 21 or 31


def test_nearest_weekday_of_a_day_the_month_lacks_skips_the_month() -> None:
    """`31W` runs only in months with a 31st (as `31` does); croniter moves it to the end."""
    assert runs("0 0 31W * *", datetime(2024, 3, 1, tzinfo=UTC), 4) == [
        "Fri 2024-03-29 00:00 UTC",
        "Fri 2024-05-31 00:00 UTC",
        "Wed 2024-07-31 00:00 UTC",
        "Fri 2024-08-30 00:00 UTC",
    ]


# --- the syntax, example by example ---------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("@hourly", ["Mon 2024-01-01 00:00", "Mon 2024-01-01 01:00"]),
        ("@daily", ["Mon 2024-01-01 00:00", "Tue 2024-01-02 00:00"]),
        ("@MIDNIGHT", ["Mon 2024-01-01 00:00", "Tue 2024-01-02 00:00"]),
        ("@weekly", ["Sun 2024-01-07 00:00", "Sun 2024-01-14 00:00"]),
        ("@monthly", ["Mon 2024-01-01 00:00", "Thu 2024-02-01 00:00"]),
        ("@yearly", ["Mon 2024-01-01 00:00", "Wed 2025-01-01 00:00"]),
        ("@annually", ["Mon 2024-01-01 00:00", "Wed 2025-01-01 00:00"]),
        ("0 9 * * mon-fri", ["Mon 2024-01-01 09:00", "Tue 2024-01-02 09:00"]),
        ("0 9 * * SAT-SUN", ["Sat 2024-01-06 09:00", "Sun 2024-01-07 09:00"]),
        ("0 9 * * 5-7", ["Fri 2024-01-05 09:00", "Sat 2024-01-06 09:00"]),
        ("0 9 ? * 7", ["Sun 2024-01-07 09:00", "Sun 2024-01-14 09:00"]),
        ("15,45 */6 * * *", ["Mon 2024-01-01 00:15", "Mon 2024-01-01 00:45"]),
        ("0 22/1 * * *", ["Mon 2024-01-01 22:00", "Mon 2024-01-01 23:00"]),
        ("0 0 1 feb-dec/5 *", ["Thu 2024-02-01 00:00", "Mon 2024-07-01 00:00"]),
        ("0 0 L * *", ["Wed 2024-01-31 00:00", "Thu 2024-02-29 00:00"]),
        ("0 0 L-2 * *", ["Mon 2024-01-29 00:00", "Tue 2024-02-27 00:00"]),
        ("0 0 LW 3,6 *", ["Fri 2024-03-29 00:00", "Fri 2024-06-28 00:00"]),
        ("0 0 1W 6 *", ["Mon 2024-06-03 00:00", "Mon 2025-06-02 00:00"]),
        ("0 0 15W 6 *", ["Fri 2024-06-14 00:00", "Mon 2025-06-16 00:00"]),
        ("0 0 * * 5L", ["Fri 2024-01-26 00:00", "Fri 2024-02-23 00:00"]),
        ("0 0 * * FRIL", ["Fri 2024-01-26 00:00", "Fri 2024-02-23 00:00"]),
        ("0 0 * * L5", ["Fri 2024-01-26 00:00", "Fri 2024-02-23 00:00"]),
        ("0 0 * * MON#2", ["Mon 2024-01-08 00:00", "Mon 2024-02-12 00:00"]),
        ("0 0 * * 7#1,1#5", ["Sun 2024-01-07 00:00", "Mon 2024-01-29 00:00"]),
        ("0 0 13 * FRI", ["Fri 2024-01-05 00:00", "Fri 2024-01-12 00:00"]),
        ("0 0 13 * *", ["Sat 2024-01-13 00:00", "Tue 2024-02-13 00:00"]),
        ("0 0 29 2 *", ["Thu 2024-02-29 00:00", "Tue 2028-02-29 00:00"]),
        ("0 0 * 2 MON#5", ["Mon 2044-02-29 00:00", "Mon 2072-02-29 00:00"]),
    ],
)
def test_cron_syntax(expression: str, expected: list[str]) -> None:
    assert runs(expression, NOW, 2) == [f"{line} UTC" for line in expected]


def test_day_of_month_or_day_of_week_when_both_are_restricted() -> None:
    got = runs("0 0 13 * FRI", NOW, 40)
    assert "Sat 2024-01-13 00:00 UTC" in got  # the 13th, though a Saturday
    assert "Fri 2024-01-19 00:00 UTC" in got  # a Friday, though not the 13th


def test_start_time_end_time_and_count_keep_their_meaning() -> None:
    properties = {
        "startTime": "2024-01-03T10:00:00Z",
        "recurrence": {"cron": "0 9 * * *", "count": 3, "endTime": "2024-01-10T00:00:00Z"},
    }
    assert preview(properties, now=NOW, count=10) == [
        datetime(2024, 1, d, 9, tzinfo=UTC) for d in (4, 5, 6)
    ]
    properties["recurrence"]["endTime"] = "2024-01-05T09:00:00Z"  # exclusive
    assert preview(properties, now=NOW, count=10) == [datetime(2024, 1, 4, 9, tzinfo=UTC)]


def test_without_start_time_the_first_run_is_the_first_match_not_at_once() -> None:
    created = datetime(2024, 1, 1, 12, 34, 56, tzinfo=UTC)
    compiled = plan(cron("0 * * * *"), created=created)
    assert compiled.first == datetime(2024, 1, 1, 13, tzinfo=UTC)
    on_the_minute = datetime(2024, 1, 1, 13, tzinfo=UTC)
    assert plan(cron("0 * * * *"), created=on_the_minute).first == on_the_minute


def test_the_zone_is_the_expressions_clock() -> None:
    assert preview(cron("0 9 * * *", "W. Europe Standard Time"), now=NOW, count=1) == [
        datetime(2024, 1, 1, 8, tzinfo=UTC)
    ]
    compiled = plan(cron("0 9 * * *", "Europe/Berlin"), created=NOW)
    assert compiled.first == datetime(2024, 1, 1, 8, tzinfo=UTC)


def test_next_execution_is_answered_in_microseconds_whatever_the_start() -> None:
    """No minute-by-minute stepping: the cost does not depend on how far back startTime is."""
    for expression in ("*/7 3-5 * * MON-FRI", "0 0 29 2 *", "0 12 L * 5L", "* * * * *"):
        for start in ("1901-01-01T00:00:00Z", "2023-12-31T00:00:00Z"):
            properties = {"startTime": start, **cron(expression, "Europe/Berlin")}
            compiled = plan(properties, created=datetime(1901, 1, 1, tzinfo=UTC))
            probe = [NOW + timedelta(minutes=37 * i) for i in range(2000)]
            began = time.perf_counter()
            for t in probe:
                compiled.at_or_after(t)
            per_call = (time.perf_counter() - began) / len(probe)
            assert per_call < 200e-6, (expression, start, per_call)


def test_shortest_gaps() -> None:
    assert cron_shortest_gap("*/5 * * * *") == timedelta(minutes=5)
    assert cron_shortest_gap("@hourly") == timedelta(hours=1)
    assert cron_shortest_gap("0,30 9 * * *") == timedelta(minutes=30)
    assert cron_shortest_gap("0 0,23 * * *") == timedelta(hours=1)  # 23:00 → 00:00
    assert cron_shortest_gap("0 9 * * MON-FRI") == timedelta(days=1)
    assert cron_shortest_gap("0 9 * * MON") == timedelta(days=7)
    assert cron_shortest_gap("0 0 L,1 * *") == timedelta(days=1)  # Jan 31 → Feb 1
    assert cron_shortest_gap("0 0 1 1 *") == timedelta(days=365)
    assert cron_shortest_gap("0 0 29 2 *") == timedelta(days=4 * 365 + 1)


# --- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recurrence", "message"),
    [
        ({"cron": "* * * *"}, "recurrence.cron: '* * * *' has 4 fields; a cron expression has 5"),
        ({"cron": "0 0 * * * * *"}, "has 7 fields; a cron expression has 5 (minute hour"),
        ({"cron": 5}, "recurrence.cron: must be a string"),
        ({"cron": "@reboot"}, "recurrence.cron: '@reboot' is not one of @yearly"),
        ({"cron": "60 * * * *"}, "recurrence.cron: minute field '60': 60 is not in 0..59"),
        ({"cron": "0 24 * * *"}, "recurrence.cron: hour field '24': 24 is not in 0..23"),
        ({"cron": "0 0 0 * *"}, "day-of-month field '0': 0 is not in 1..31"),
        ({"cron": "0 0 * 13 *"}, "month field '13': 13 is not in 1..12"),
        ({"cron": "0 0 * * 8"}, "day-of-week field '8': 8 is not in 0..7"),
        ({"cron": "0 0 * FOO *"}, "month field 'FOO': 'FOO' is not a number or a name (JAN..DEC)"),
        ({"cron": "0 5-2 * * *"}, "hour field '5-2': the range runs backwards (5 > 2)"),
        ({"cron": "*/0 * * * *"}, "minute field '*/0': 0 is not in 1..60"),
        ({"cron": "0,,5 * * * *"}, "minute field '0,,5': has an empty list item"),
        ({"cron": "? * * * *"}, "minute field '?': '?' is only for day-of-month and day-of-week"),
        ({"cron": "0 0 * * MON#6"}, "day-of-week field 'MON#6': 6 is not in 1..5"),
        ({"cron": "0 0 * * L"}, "day-of-week field 'L': 'L' needs a day"),
        ({"cron": "0 0 32W * *"}, "day-of-month field '32W': 32 is not in 1..31"),
        ({"cron": "0 0 L-31 * *"}, "day-of-month field 'L-31': 31 is not in 0..30"),
        ({"cron": "0 0 30 2 *"}, "recurrence.cron: '0 0 30 2 *' never matches a day of any year"),
        ({"cron": "0 0 31 4,6 *"}, "never matches"),
        ({"cron": "0 * * * *", "frequency": "Hour"}, "recurrence.frequency: must be absent with"),
        ({"cron": "0 * * * *", "interval": 2}, "recurrence.interval: must be absent with"),
        (
            {"cron": "0 * * * *", "schedule": {"minutes": [0]}},
            "recurrence.schedule: must be absent with recurrence.cron",
        ),
    ],
)
def test_invalid_cron_is_refused_naming_the_field(recurrence: dict[str, Any], message: str) -> None:
    with pytest.raises(RecurrenceError) as caught:
        plan({"recurrence": recurrence}, created=NOW)
    assert message in str(caught.value)


def test_cron_is_read_case_insensitively_with_extra_spaces() -> None:
    assert runs("  0   9  *  jan  Mon ", NOW, 1) == ["Mon 2024-01-01 09:00 UTC"]
    assert preview({"Recurrence": {"CRON": "0 9 * * *"}}, now=NOW, count=1) == [
        datetime(2024, 1, 1, 9, tzinfo=UTC)
    ]
