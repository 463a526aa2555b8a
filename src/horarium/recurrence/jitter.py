"""`recurrence.jitter`: each execution starts a deterministic offset after its nominal instant
(docs/recurrence.md §10).

The offset of the execution nominally at `n` (UTC µs) in a series created at `c`: take the first
8 bytes of SHA-256 over the ASCII text ``"<c>/<n>"`` (both as microseconds since
1970-01-01T00:00Z), read big-endian, as h; the offset is ``h mod ⌈w / 1 s⌉`` whole seconds for a
window w of a second or more, else ``h mod w`` microseconds. The window is the jitter,
narrowed to the time until the series' next nominal instant when that is sooner (daylight
saving time, or a first run at *created*, can bring two runs closer than the recurrence's
shortest gap): so executions keep their order and never meet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from typing import Any

from horarium.recurrence.durations import read_duration
from horarium.recurrence.errors import RecurrenceError
from horarium.recurrence.timeline import LIMIT, SECOND, UNIX_EPOCH, from_instant, to_instant

PATH = "recurrence.jitter"


def read_jitter(value: Any) -> timedelta | None:
    """`recurrence.jitter`: a TimeSpan (`00:05:00`) or ISO 8601 duration (`PT5M`); None when
    absent."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise RecurrenceError(PATH, "must be a duration such as '00:05:00' or 'PT5M'")
    try:
        return read_duration(value)
    except ValueError as e:
        raise RecurrenceError(PATH, f"{value!r} {e}") from None


def offset(created: int, nominal: int, window: int) -> int:
    """The offset (µs, in [0, window)) of the execution nominally at `nominal`: whole seconds
    unless the window is shorter than a second."""
    key = f"{created - UNIX_EPOCH}/{nominal - UNIX_EPOCH}".encode()
    h = int.from_bytes(hashlib.sha256(key).digest()[:8], "big")
    if window < SECOND:
        return h % window
    return h % -(-window // SECOND) * SECOND


class Jitter:
    """Real start instants from a series' nominal ones. `nominal(t)` is the series' first
    nominal instant at or after `t` (µs), or None when it has ended."""

    def __init__(self, window: int, created: int, nominal: Callable[[int], int | None]) -> None:
        self.window = window
        self.created = created
        self.nominal = nominal

    def start(self, n: int, following: int | None) -> int:
        """The real start of the execution nominally at `n`; `following` is the next nominal."""
        window = self.window if following is None else min(self.window, following - n)
        return n + offset(self.created, n, window)

    def at_or_after(self, t: int) -> int | None:
        """The first real start at or after `t` (starts keep the nominal order)."""
        n = self.nominal(t - self.window + 1)
        while n is not None:
            following = self.nominal(n + 1)
            u = self.start(n, following)
            if u >= t:
                return u if u <= LIMIT else None  # past the calendar's end: the series ends
            n = following
        return None

    def nominal_of(self, u: int) -> int | None:
        """The nominal instant of the execution that starts at `u`, or None."""
        n = self.nominal(u - self.window + 1)
        while n is not None and n <= u:
            following = self.nominal(n + 1)
            if self.start(n, following) == u:
                return n
            n = following
        return None

    def iterate(self, t: int, nominals: Iterator[datetime]) -> Iterator[datetime]:
        """Real starts at or after `t`, from the series' nominal instants in order (which must
        begin at or before `t - window + 1`)."""
        previous: int | None = None
        for instant in nominals:
            n = from_instant(instant)
            if previous is not None:
                u = self.start(previous, n)
                if u >= t:
                    yield to_instant(u)
            previous = n
        if previous is not None:
            u = self.start(previous, None)
            if t <= u <= LIMIT:  # past the calendar's end: the series ends
                yield to_instant(u)
