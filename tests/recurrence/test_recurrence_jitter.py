"""`recurrence.jitter` (docs/recurrence.md §10): each execution starts at a deterministic offset
in [0, jitter) after the instant the schedule names, derived from the series' *created* instant
and that nominal instant; `first`, `at_or_after`, `after`, `iter_from`, `preview` and
`describe` all give the real starts, in order, never meeting."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from io import StringIO
from itertools import islice, pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from horarium.cli.preview import run
from horarium.recurrence import RecurrenceError, plan, preview

NOW = datetime(2024, 1, 1, tzinfo=UTC)
HOURLY = {"startTime": "2024-01-01T00:00:00Z", "recurrence": {"cron": "0 * * * *"}}


def jittered(properties: dict[str, Any], jitter: str) -> dict[str, Any]:
    return {**properties, "recurrence": {**properties["recurrence"], "jitter": jitter}}


def documented_offset(created: datetime, nominal: datetime, window: timedelta) -> timedelta:
    """The formula of docs/recurrence.md §10, written out independently."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    micros = timedelta(microseconds=1)
    key = f"{(created - epoch) // micros}/{(nominal - epoch) // micros}".encode()
    h = int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
    seconds = -(-window // timedelta(seconds=1))
    return timedelta(seconds=h % seconds)


def test_each_execution_starts_at_its_documented_offset() -> None:
    properties = jittered(HOURLY, "PT10M")
    compiled = plan(properties, created=NOW)
    starts = list(islice(compiled.iter_from(NOW), 48))
    for hour, start in enumerate(starts):
        nominal = NOW + timedelta(hours=hour)
        assert start == nominal + documented_offset(NOW, nominal, timedelta(minutes=10))
        seen = compiled.describe(start)
        assert seen.nominal == nominal and seen.jitter == start - nominal
        assert seen.wall == nominal.replace(tzinfo=None)
    offsets = {start - (NOW + timedelta(hours=h)) for h, start in enumerate(starts)}
    assert len(offsets) > 20 and all(timedelta(0) <= o < timedelta(minutes=10) for o in offsets)
    assert all(o.microseconds == 0 for o in offsets)  # whole seconds


def test_offsets_are_the_same_every_time_and_differ_between_series() -> None:
    properties = jittered(HOURLY, "00:30:00")
    once = preview(properties, now=NOW, count=10)
    assert preview(properties, now=NOW, count=10) == once
    assert plan(properties, created=NOW).first == once[0]
    later = preview(properties, now=NOW + timedelta(microseconds=1), count=10)
    assert later != once  # another series (another created instant): other offsets


def test_count_start_and_end_time_apply_to_the_nominal_instants() -> None:
    properties = {
        "startTime": "2024-01-01T00:00:00Z",
        "recurrence": {"cron": "0 * * * *", "jitter": "PT59M", "count": 3},
    }
    runs = preview(properties, now=NOW, count=10)
    assert len(runs) == 3
    assert [r.replace(minute=0, second=0) for r in runs] == [
        datetime(2024, 1, 1, h, tzinfo=UTC) for h in range(3)
    ]
    properties["recurrence"] = {
        "cron": "0 * * * *",
        "jitter": "PT59M",
        "endTime": "2024-01-01T02:00:00Z",
    }
    runs = preview(properties, now=NOW, count=10)
    assert [r.hour for r in runs] == [0, 1]  # the 02:00 execution does not exist


def test_azure_recurrences_are_jittered_too_and_the_first_run_at_once() -> None:
    properties = {"recurrence": {"frequency": "Day", "jitter": "PT1H"}}
    created = datetime(2024, 1, 1, 12, 0, 0, 500_000, tzinfo=UTC)
    compiled = plan(properties, created=created)
    first = compiled.first
    assert first is not None and created <= first < created + timedelta(hours=1)
    assert compiled.describe(first).nominal == created


@pytest.mark.parametrize(
    ("recurrence", "message"),
    [
        ({"cron": "*/5 * * * *", "jitter": "PT6M"}, "longer than the shortest gap"),
        ({"frequency": "Minute", "interval": 10, "jitter": "PT11M"}, "shortest gap"),
        (
            {"frequency": "Day", "schedule": {"hours": [9, 10]}, "jitter": "PT61M"},
            "longer than the shortest gap between two runs (1:00:00)",
        ),
        ({"frequency": "Week", "jitter": "P8D"}, "(7 days, 0:00:00)"),
        ({"cron": "@daily", "jitter": "-PT1M"}, "recurrence.jitter: '-PT1M' is negative"),
        ({"cron": "@daily", "jitter": 60}, "recurrence.jitter: must be a duration"),
        ({"cron": "@daily", "jitter": "P1M"}, "months and years have no fixed length"),
    ],
)
def test_invalid_jitter_is_refused(recurrence: dict[str, Any], message: str) -> None:
    with pytest.raises(RecurrenceError) as caught:
        plan({"recurrence": recurrence}, created=NOW)
    assert caught.value.field == "recurrence.jitter"
    assert message in str(caught.value)


def test_a_jitter_as_long_as_the_gap_is_allowed_and_zero_is_none() -> None:
    assert len(preview(jittered(HOURLY, "PT1H"), now=NOW, count=3)) == 3
    assert preview(jittered(HOURLY, "00:00:00"), now=NOW, count=3) == preview(
        HOURLY, now=NOW, count=3
    )


def test_daylight_saving_narrows_the_window_so_runs_never_meet() -> None:
    """01:50 and 03:10 are 80 minutes apart on the wall clock, 20 minutes apart in time on the
    day New York springs forward: that execution's window shrinks to those 20 minutes."""
    properties = {
        "startTime": "2024-03-08T00:00:00",
        "recurrence": {
            "cron": "10,50 1,3 * * *",
            "timeZone": "America/New_York",
            "jitter": "PT40M",
        },
    }
    before = datetime(2024, 3, 10, 6, 50, tzinfo=UTC)  # 01:50 EST
    after = datetime(2024, 3, 10, 7, 10, tzinfo=UTC)  # 03:10 EDT
    narrowed = 0
    for k in range(20):  # twenty series: twenty draws of the offset
        created = NOW + timedelta(microseconds=k)
        compiled = plan(properties, created=created)
        starts = list(islice(compiled.iter_from(datetime(2024, 3, 9, tzinfo=UTC)), 12))
        nominals = [compiled.describe(s).nominal for s in starts]
        assert before in nominals and after in nominals
        assert all(a < b for a, b in pairwise(starts))
        for start, nominal, following in zip(starts, nominals, nominals[1:], strict=False):
            assert nominal is not None and following is not None
            assert nominal <= start < following
        if documented_offset(created, before, timedelta(minutes=40)) >= timedelta(minutes=20):
            narrowed += 1
            start = starts[nominals.index(before)]
            assert start - before == documented_offset(created, before, timedelta(minutes=20))
    assert narrowed  # the full 40-minute window would have passed 03:10 EDT


RECURRENCES = st.sampled_from(
    [
        ({"cron": "*/10 * * * *"}, "PT10M"),
        ({"cron": "0 9 * * MON-FRI", "timeZone": "Europe/Berlin"}, "PT12H"),
        ({"cron": "10,50 1,3 * * *", "timeZone": "America/New_York"}, "PT40M"),
        ({"cron": "30 1 * * *", "timeZone": "America/New_York"}, "P1D"),
        ({"frequency": "Minute", "interval": 7}, "PT7M"),
        ({"frequency": "Hour", "schedule": {"minutes": [0, 20]}}, "PT20M"),
        ({"frequency": "Day", "timeZone": "Europe/Berlin", "count": 5}, "PT3H"),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    RECURRENCES,
    st.datetimes(datetime(2024, 3, 1), datetime(2024, 11, 30)).map(lambda d: d.replace(tzinfo=UTC)),
    st.integers(0, 3 * 24 * 60),
    st.booleans(),
)
def test_first_at_or_after_after_and_iter_from_agree(
    case: tuple[dict[str, Any], str], created: datetime, minutes: int, with_start: bool
) -> None:
    recurrence, jitter = case
    properties: dict[str, Any] = {"recurrence": {**recurrence, "jitter": jitter}}
    if with_start:
        properties["startTime"] = "2024-03-01T00:00:00Z"
    compiled = plan(properties, created=created)
    t = created + timedelta(minutes=minutes)
    starts = list(islice(compiled.iter_from(t), 8))
    assert all(a < b for a, b in pairwise(starts))
    if starts:
        assert compiled.at_or_after(t) == starts[0]
        assert compiled.at_or_after(starts[0]) == starts[0]
        for a, b in pairwise(starts):
            assert compiled.after(a) == b
            assert compiled.at_or_after(a + timedelta(microseconds=1)) == b
        for start in starts:
            seen = compiled.describe(start)
            assert seen.nominal is not None and seen.nominal <= start
            assert seen.jitter == start - seen.nominal < timedelta(hours=24)
    everything = preview(properties, now=created, count=6)
    if everything:
        assert everything[0] == compiled.first
        assert everything == list(islice(compiled.iter_from(created), len(everything)))


def test_a_jittered_series_ends_cleanly_at_the_calendars_end() -> None:
    properties = {
        "startTime": "8999-06-01T00:00:00Z",
        "recurrence": {"frequency": "Week", "jitter": "P7D"},
    }
    for k in range(10):  # ten series: some draw an offset past year 9999 for the last run
        compiled = plan(properties, created=datetime(8999, 1, 1, 0, 0, k, tzinfo=UTC))
        runs = list(compiled.iter_from(datetime(9999, 10, 1, tzinfo=UTC)))
        assert 11 <= len(runs) <= 14 and runs[-1] <= datetime(9999, 12, 30, tzinfo=UTC)
        assert compiled.after(runs[-1]) is None
        assert compiled.at_or_after(datetime(9999, 12, 30, 0, 0, 1, tzinfo=UTC)) is None


def test_the_cli_marks_jittered_executions() -> None:
    out, err = StringIO(), StringIO()
    text = '{"recurrence": {"cron": "0 10 * * *", "timeZone": "Europe/Berlin", "jitter": "PT5M"}}'
    code = run(text, now="2024-01-01T00:00:00Z", count=2, out=out, err=err)
    assert code == 0, err.getvalue()
    created = datetime(2024, 1, 1, tzinfo=UTC)
    lines = out.getvalue().splitlines()
    for day, line in zip((1, 2), lines, strict=True):
        nominal = datetime(2024, 1, day, 9, tzinfo=UTC)
        offset = documented_offset(created, nominal, timedelta(minutes=5))
        start = nominal + offset
        assert line == (
            f"{start:%Y-%m-%dT%H:%M:%S}Z  {start + timedelta(hours=1):%Y-%m-%d %H:%M:%S} CET"
            + (f"  [jitter: +{offset} after 10:00:00]" if offset else "")
        )
