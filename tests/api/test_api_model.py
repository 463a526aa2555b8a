"""The wire model's pure rules, checked directly (no server): each is visible on the wire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from horarium.model import datetimes, enums
from horarium.model.durations import format_timespan, parse_duration
from horarium.model.errors import BadRequest
from horarium.model.locations import display_name
from horarium.model.merge import merge_patch
from horarium.model.quota import shortest_gap_seconds


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("00:00:30", timedelta(seconds=30)),
        ("00:01:00", timedelta(minutes=1)),
        ("30.00:00:00", timedelta(days=30)),  # standard TimeSpan days (not the SDK 2.0 x30)
        ("1.02:03:04.5", timedelta(days=1, hours=2, minutes=3, seconds=4, milliseconds=500)),
        ("PT30S", timedelta(seconds=30)),
        ("P1DT2H", timedelta(days=1, hours=2)),
    ],
)
def test_durations_read_as_timespan_or_iso(text: str, value: timedelta) -> None:
    assert parse_duration(text, "x") == value


@pytest.mark.parametrize("text", ["", "soon", "25:00:00", "00:61:00", "P1M", "-PT5S", "1"])
def test_bad_durations_name_the_field(text: str) -> None:
    with pytest.raises(BadRequest, match=r"^action\.retryPolicy\.retryInterval: "):
        parse_duration(text, "action.retryPolicy.retryInterval")


def test_durations_are_written_as_timespans() -> None:
    assert format_timespan(timedelta(seconds=30)) == "00:00:30"
    assert format_timespan(timedelta(days=30)) == "30.00:00:00"
    assert format_timespan(timedelta(hours=1, microseconds=1)) == "01:00:00.0000010"


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("2017-09-10T18:50:16.9049999999999999Z", "2017-09-10T18:50:16.905Z"),  # live service
        ("2016-03-30T22:40:55.469507+02:00", "2016-03-30T20:40:55.469507Z"),
        ("2015-07-13T00:00:00.000Z", "2015-07-13T00:00:00Z"),
        ("2012-11-04", "2012-11-04T00:00:00"),  # wall clock: the recurrence's zone decides
        ("2012-11-04T10:00", "2012-11-04T10:00:00"),
    ],
)
def test_date_times_are_stored_canonically(given: str, stored: str) -> None:
    assert datetimes.canonical(given, "startTime") == stored


def test_wall_clock_times_are_shown_in_utc_unless_a_zone_is_set() -> None:
    assert datetimes.render("2012-11-04T10:00:00", has_zone=False) == "2012-11-04T10:00:00Z"
    assert datetimes.render("2012-11-04T10:00:00", has_zone=True) == "2012-11-04T10:00:00"
    moment = datetime(2016, 3, 30, 20, 39, 53, 802195, tzinfo=UTC)
    assert datetimes.format_ticks(moment) == "2016-03-30T20:39:53.8021950Z"


def test_enum_output_casing_follows_the_live_service() -> None:
    assert [enums.camel(v) for v in ("Enabled", "Week", "NetMessaging", "AMQP")] == [
        "enabled",
        "week",
        "netMessaging",
        "amqp",
    ]
    assert enums.find("clientcertificate", enums.HTTP_AUTH_TYPES) == "ClientCertificate"


def test_patch_merges_deeply_and_null_removes() -> None:
    stored = {"action": {"type": "Http", "request": {"uri": "u", "headers": {"a": "1"}}}}
    patch = {"action": {"request": {"headers": {"b": "2"}, "uri": None}}}
    assert merge_patch(stored, patch) == {
        "action": {"type": "Http", "request": {"headers": {"a": "1", "b": "2"}}}
    }


def test_patch_replaces_an_object_whose_type_changes() -> None:
    stored = {"authentication": {"type": "Basic", "username": "u", "password": "p"}}
    patch = {"authentication": {"type": "ClientCertificate", "pfx": "x"}}
    assert merge_patch(stored, patch) == patch


@pytest.mark.parametrize(
    ("recurrence", "minutes"),
    [
        ({"frequency": "Hour", "interval": 2}, 120),
        ({"frequency": "Day", "schedule": {"minutes": [0, 15, 30, 45]}}, 15),
        ({"frequency": "Day", "schedule": {"hours": [5, 17]}}, 720),
        ({"frequency": "Day", "schedule": {"minutes": [0]}}, 60),  # every hour on the hour
        ({"frequency": "Week", "schedule": {"weekDays": ["Monday", "Tuesday"]}}, 1440),
        ({"frequency": "Month", "schedule": {"monthDays": [1, -1]}}, 1440),
        ({"frequency": "Month", "interval": 1}, 28 * 1440),
    ],
)
def test_quota_compares_the_shortest_gap_between_runs(
    recurrence: dict[str, object], minutes: int
) -> None:
    assert shortest_gap_seconds(recurrence) == 60 * minutes


def test_locations_get_their_display_name() -> None:
    assert display_name("westus") == "West US"
    assert display_name("South Central US") == "South Central US"
    assert display_name("somewhere-new") == "somewhere-new"
