"""The engine agrees with an independent brute-force reference (`recurrence_brute`) on random
schedules, zones (with DST gaps, overlaps, 30-minute shifts, midnight and 24-hour jumps) and
anchors; `first`, `at_or_after`, `after`, `iter_from` and `preview` agree with each other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import islice, pairwise
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from horarium.recurrence import plan, preview
from horarium.recurrence.zones import find_zone
from tests.recurrence.recurrence_brute import Job, expected_runs, to_properties

# Zones with DST gaps and overlaps, 30-minute shifts, midnight and 24-hour jumps, and days
# near their transitions, so that daylight saving time is exercised often.
TRANSITIONS = {
    "UTC": [datetime(2023, 6, 15)],
    "Asia/Kolkata": [datetime(2023, 6, 15)],
    "Europe/Berlin": [datetime(2019, 3, 31), datetime(2019, 10, 27)],
    "W. Europe Standard Time": [datetime(2019, 3, 31), datetime(2019, 10, 27)],
    "America/Chicago": [datetime(2019, 3, 10), datetime(2019, 11, 3)],
    "America/St_Johns": [datetime(2019, 3, 10), datetime(2019, 11, 3)],
    "Australia/Lord_Howe": [datetime(2019, 4, 7), datetime(2019, 10, 6)],
    "America/Santiago": [datetime(2019, 4, 7), datetime(2019, 9, 8)],
    "Pacific/Apia": [datetime(2011, 12, 30), datetime(2019, 4, 7)],
}
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
INTERVALS = {"Minute": 45, "Hour": 30, "Day": 9, "Week": 5, "Month": 18, "Year": 1}
ALLOWED = {
    "Minute": [],
    "Hour": ["minutes"],
    "Day": ["hours", "minutes"],
    "Week": ["weekDays", "hours", "minutes"],
    "Month": ["monthDays", "monthlyOccurrences", "hours", "minutes"],
    "Year": ["hours", "minutes"],
}


def cased(name: str) -> st.SearchStrategy[str]:
    return st.sampled_from([name, name.lower(), name.upper()])


OCCURRENCE = st.one_of(st.integers(1, 5), st.integers(-5, -1))

FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "minutes": st.lists(st.integers(0, 59), min_size=1, max_size=4, unique=True),
    "hours": st.lists(st.integers(0, 23), min_size=1, max_size=4, unique=True),
    "weekDays": st.lists(st.sampled_from(DAYS), min_size=1, max_size=7, unique=True).flatmap(
        lambda days: st.tuples(*[cased(d) for d in days]).map(list)
    ),
    "monthDays": st.lists(
        st.one_of(st.integers(1, 31), st.integers(-31, -1)), min_size=1, max_size=3, unique=True
    ),
    "monthlyOccurrences": st.lists(
        st.one_of(
            st.fixed_dictionaries({"day": st.sampled_from(DAYS)}),
            st.fixed_dictionaries({"day": st.sampled_from(DAYS), "occurrence": OCCURRENCE}),
            st.fixed_dictionaries({"day": st.sampled_from(DAYS), "Occurrence": OCCURRENCE}),
        ),
        min_size=1,
        max_size=2,
    ),
}


@st.composite
def jobs(draw: st.DrawFn) -> tuple[Job, datetime]:
    zone_name = draw(st.sampled_from(list(TRANSITIONS)))
    zone = find_zone(zone_name)
    assert zone is not None
    frequency = draw(st.sampled_from(list(INTERVALS)))
    interval = draw(st.integers(1, INTERVALS[frequency]))
    schedule: dict[str, Any] | None = None
    if ALLOWED[frequency] and draw(st.integers(0, 3)) > 0:
        names = draw(
            st.lists(st.sampled_from(ALLOWED[frequency]), min_size=1, unique=True, max_size=3)
        )
        schedule = {name: draw(FIELD_VALUES[name]) for name in names}
    base = draw(st.sampled_from(TRANSITIONS[zone_name])) + timedelta(
        days=draw(st.integers(-4, 3)), minutes=draw(st.integers(0, 24 * 60 - 1))
    )
    if draw(st.integers(0, 3)) == 0:
        base += timedelta(seconds=17, microseconds=250_000)
    spread = draw(st.sampled_from([3, 3, 3, 40])) * 24 * 60  # mostly close to the transition
    created_wall = base + timedelta(minutes=draw(st.integers(-spread, spread)))
    created = created_wall.replace(tzinfo=zone).astimezone(UTC)
    if draw(st.integers(0, 5)) == 0:
        created += timedelta(seconds=draw(st.integers(0, 59)), microseconds=123)
    how = draw(st.sampled_from(["none", "wall", "instant"]))
    start_wall = base if how == "wall" else None
    start_instant = base.replace(tzinfo=zone).astimezone(UTC) if how == "instant" else None
    if how == "instant" and draw(st.booleans()):  # an instant in the repeated hour, sometimes
        start_instant = start_instant + timedelta(hours=1) if start_instant else None
    end = None
    if draw(st.integers(0, 4)) == 0:
        end = created + timedelta(minutes=draw(st.integers(-60, 90 * 24 * 60)))
    t = created + timedelta(minutes=draw(st.integers(0, spread)))
    if draw(st.booleans()):
        t = created
    job = Job(
        zone=zone,
        zone_name=zone_name,
        frequency=frequency,
        interval=interval,
        created=created,
        start_wall=start_wall,
        start_instant=start_instant,
        schedule=schedule,
        end=end,
    )
    return job, t


def _cut(runs: list[datetime], horizon: datetime) -> list[datetime]:
    return [r for r in runs if r < horizon]


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(jobs())
def test_engine_agrees_with_brute_force(case: tuple[Job, datetime]) -> None:
    job, t = case
    properties = to_properties(job)
    compiled = plan(properties, created=job.created)
    horizon_days = 2000
    horizon = t + timedelta(days=horizon_days - 3)

    expected = _cut(expected_runs(job, t, 6, horizon_days), horizon)
    got = _cut(list(islice(compiled.iter_from(t), 6)), horizon)
    assert got == expected, properties

    expected_first = _cut(expected_runs(job, job.created, 1, horizon_days), horizon)
    first = compiled.first
    assert _cut([first] if first else [], horizon) == expected_first
    assert compiled.at_or_after(job.created) == first
    if got:
        assert compiled.at_or_after(t) == got[0]
        assert compiled.after(got[0] - timedelta(microseconds=1)) == got[0]
        for a, b in pairwise(got):
            assert compiled.after(a) == b


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs(), st.integers(1, 8))
def test_preview_is_first_then_after_and_honours_count(
    case: tuple[Job, datetime], count: int
) -> None:
    job, _ = case
    job.extra["count"] = count
    properties = to_properties(job)
    compiled = plan(properties, created=job.created)
    runs = preview(properties, now=job.created, count=10)
    assert len(runs) <= count
    if compiled.first is None:
        assert runs == []
        return
    assert runs[0] == compiled.first
    for a, b in pairwise(runs):
        assert compiled.after(a) == b
    assert runs == sorted(set(runs))
