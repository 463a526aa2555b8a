"""The engine's exactness in zones with daylight saving time rests on one property of the time-zone
database: UTC-offset changes are more than 52 hours apart (the engine looks 26 h back from an
instant and checks a run day's offset at two points up to 50 h apart). This checks it for every
zone from 1900 to 2200 with the tzdata in use, so a new tzdata cannot break it silently."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from zoneinfo import available_timezones
from zoneinfo._zoneinfo import ZoneInfo as PureZoneInfo  # the pure-Python one lists transitions

LOW = datetime(1900, 1, 1, tzinfo=UTC).timestamp()
HIGH = datetime(2200, 1, 1, tzinfo=UTC).timestamp()


def offset_changes(key: str) -> list[float]:
    zone = PureZoneInfo.no_cache(key)
    offsets = [info.utcoff for info in zone._ttinfos]
    changes = []
    for i, instant in enumerate(zone._trans_utc):
        before = zone._tti_before.utcoff if i == 0 else offsets[i - 1]
        if offsets[i] != before and LOW <= instant <= HIGH:
            changes.append(instant)
    return changes


def test_offset_changes_are_more_than_52_hours_apart_in_every_zone() -> None:
    too_close = []
    for key in sorted(available_timezones()):
        changes = offset_changes(key)
        too_close += [(key, a) for a, b in itertools.pairwise(changes) if b - a <= 52 * 3600]
    assert too_close == []
    assert len(offset_changes("Europe/Berlin")) > 100  # the check does see transitions
