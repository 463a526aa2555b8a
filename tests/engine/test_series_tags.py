"""The execution tag of a series execution (`store/core/tags.py`): receivers deduplicate on it, so
an execution replayed after a crash, by this process, another one or a newer release, must carry
the tag of its first try, and different occurrences must not share one."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone

from horarium.store.core.tags import is_series_tag, new_tag, series_tag

SET_AT = datetime(2026, 11, 24, 4, 0, 0, 123456, tzinfo=UTC)
EXPECTED = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def test_an_occurrence_keeps_its_tag_across_processes_and_releases() -> None:
    # The derivation is pinned: changing it would give executions in flight across an upgrade
    # a second tag (docs/engine.md, "Execution tag").
    assert series_tag(42, SET_AT, 7, EXPECTED) == "82d302f2543f5035fb376c35c70ebc58"
    another = subprocess.run(
        [
            sys.executable,
            "-c",
            "from datetime import datetime, UTC; from horarium.store.core.tags import series_tag; "
            "print(series_tag(42, datetime(2026, 11, 24, 4, 0, 0, 123456, tzinfo=UTC), 7, "
            "datetime(2026, 12, 1, 9, 30, tzinfo=UTC)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert another.stdout.strip() == series_tag(42, SET_AT, 7, EXPECTED)


def test_the_tag_names_the_instant_whatever_its_time_zone() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert series_tag(42, SET_AT.astimezone(plus_two), 7, EXPECTED.astimezone(plus_two)) == (
        series_tag(42, SET_AT, 7, EXPECTED)
    )
    assert is_series_tag(series_tag(42, SET_AT, 7, EXPECTED), 42, SET_AT, 7, EXPECTED)


def test_each_part_of_the_occurrence_changes_the_tag() -> None:
    microsecond = timedelta(microseconds=1)
    tags = {
        series_tag(42, SET_AT, 7, EXPECTED),
        series_tag(43, SET_AT, 7, EXPECTED),
        series_tag(42, SET_AT + microsecond, 7, EXPECTED),
        series_tag(42, SET_AT, 8, EXPECTED),
        series_tag(42, SET_AT, 7, EXPECTED + microsecond),
        series_tag(42, SET_AT, 7, EXPECTED - microsecond),
    }
    assert len(tags) == 6
    assert not is_series_tag(series_tag(42, SET_AT, 7, EXPECTED), 42, SET_AT, 8, EXPECTED)


def test_tags_look_like_the_live_services() -> None:
    for tag in (series_tag(42, SET_AT, 7, EXPECTED), new_tag()):
        assert len(tag) == 32
        assert set(tag) <= set("0123456789abcdef")
    assert new_tag() != new_tag()
