"""A monitor's status over time, pure: what a check-in makes of it (`checked_in`) and what the
passing of time makes of it (`judge`), and when it must be looked at again (`due_at`).

- An expected instant passes without a check-in at or after the one before it: `Late`, then
  `Down` once `grace` has passed too (straight to `Down` when both have passed).
- A `start` sets the run going: without its success within `maxRuntime` the monitor is `Down`.
- A success (or exit code 0) makes it `Up`; a `fail` (or another exit code) makes it `Down`.
- `Down` stays until a success; a check-in covers every expected instant at or before it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from horarium.model.datetimes import format_instant
from horarium.model.durations import format_timespan
from horarium.model.monitor import CheckInKind, MonitorStatus, grace_of, max_runtime_of
from horarium.model.notifications import MONITOR_DOWN, MONITOR_LATE, MONITOR_UP


@dataclass(frozen=True)
class Watch:
    """What the status of an enabled monitor depends on."""

    status: str
    expected_at: datetime | None  # the first expected instant no check-in has covered
    started_at: datetime | None  # a `start` whose success has not come
    grace: timedelta
    max_runtime: timedelta | None


def watch_of(definition: dict[str, Any], /, **values: Any) -> Watch:
    """The `Watch` of a monitor with `definition` and the status columns in `values` (status,
    expected_at, started_at; others are ignored)."""
    return Watch(
        status=values["status"],
        expected_at=values["expected_at"],
        started_at=values["started_at"],
        grace=grace_of(definition),
        max_runtime=max_runtime_of(definition),
    )


@dataclass(frozen=True)
class Verdict:
    watch: Watch
    due_at: datetime | None  # when to judge again (None: only a check-in changes it)
    event: str | None = None  # MonitorLate / MonitorDown / MonitorUp, when it changed
    reason: str = ""


def judge(watch: Watch, now: datetime) -> Verdict:
    """The monitor at `now`, with no check-in since `watch` was written."""
    if watch.status == MonitorStatus.DOWN:
        return Verdict(watch, None)
    overrun = _overrun_at(watch)
    if overrun is not None and now >= overrun:
        assert watch.started_at is not None and watch.max_runtime is not None
        return _down(
            watch,
            f"the run started at {format_instant(watch.started_at)} has not checked in its"
            f" success within maxRuntime {format_timespan(watch.max_runtime)}",
        )
    expected = watch.expected_at
    if expected is not None and now >= expected + watch.grace:
        return _down(
            watch,
            f"no check-in for the one expected at {format_instant(expected)} within grace"
            f" {format_timespan(watch.grace)}",
        )
    if expected is not None and now >= expected and watch.status != MonitorStatus.LATE:
        late = replace(watch, status=MonitorStatus.LATE)
        reason = f"the check-in expected at {format_instant(expected)} has not come"
        return Verdict(late, due_at(late, now), MONITOR_LATE, reason)
    return Verdict(watch, due_at(watch, now))


def _down(watch: Watch, reason: str) -> Verdict:
    return Verdict(replace(watch, status=MonitorStatus.DOWN), None, MONITOR_DOWN, reason)


def _overrun_at(watch: Watch) -> datetime | None:
    if watch.started_at is None or watch.max_runtime is None:
        return None
    return watch.started_at + watch.max_runtime


def due_at(watch: Watch, now: datetime) -> datetime | None:
    """The next instant at which time alone changes the monitor's status."""
    if watch.status == MonitorStatus.DOWN:
        return None
    expected = watch.expected_at
    times = [_overrun_at(watch)]
    if expected is not None:
        times.append(expected + watch.grace)
        if watch.status != MonitorStatus.LATE:
            times.append(expected)
    return min((t for t in times if t is not None), default=None)


def checked_in(
    watch: Watch, kind: str, at: datetime, next_expected: datetime | None, message: str = ""
) -> Verdict:
    """`watch` after a check-in of `kind` at `at`; `next_expected` is the first expected
    instant after `at`."""
    before = watch.status
    if kind == CheckInKind.START:
        after = replace(watch, started_at=at, expected_at=next_expected)
        return Verdict(after, due_at(after, at))
    if kind == CheckInKind.FAIL:
        after = replace(
            watch, status=MonitorStatus.DOWN, started_at=None, expected_at=next_expected
        )
        event = MONITOR_DOWN if before != MonitorStatus.DOWN else None
        return Verdict(after, None, event, message or "a check-in reported a failure")
    after = replace(watch, status=MonitorStatus.UP, started_at=None, expected_at=next_expected)
    event = MONITOR_UP if before in (MonitorStatus.LATE, MonitorStatus.DOWN) else None
    return Verdict(after, due_at(after, at), event, "a check-in reported success")
