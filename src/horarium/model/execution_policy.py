"""`properties.executionPolicy` (Horarium): what happens when an execution falls due while the
job's previous one is unfinished (`overlap`), and to executions missed while the service was
down (`missed`, `catchUpWindow`), and the deadlines whose breach is notified (`deadlines`:
`startWithin`, `finishWithin`). A job without it behaves as Azure Scheduler did: overlapping
executions run, of missed executions the latest runs once, and no deadline is watched."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from horarium.model import enums
from horarium.model.durations import format_timespan, parse_duration, read_duration
from horarium.model.errors import BadRequest
from horarium.model.fields import obj
from horarium.model.keys import Shape

OVERLAP_ALLOW = "Allow"
OVERLAP_SKIP = "Skip"
OVERLAP_BUFFER_ONE = "BufferOne"
OVERLAPS = (OVERLAP_ALLOW, OVERLAP_SKIP, OVERLAP_BUFFER_ONE)

MISSED_RUN_LATEST = "RunLatest"
MISSED_RUN_ALL = "RunAll"
MISSED_SKIP = "Skip"
MISSEDS = (MISSED_RUN_LATEST, MISSED_RUN_ALL, MISSED_SKIP)

DEFAULT_CATCH_UP_WINDOW = timedelta(days=1)
MAX_CATCH_UP_WINDOW = timedelta(days=366)

MAX_DEADLINE = timedelta(days=7)

POLICY_SHAPE: dict[str, Shape] = {
    "overlap": None,
    "missed": None,
    "catchUpWindow": None,
    "deadlines": {"startWithin": None, "finishWithin": None},
}
PATH = "properties.executionPolicy"


@dataclass(frozen=True)
class Deadlines:
    """`executionPolicy.deadlines`: an execution not started `start_within` after its expected
    time raises ExecutionLate; one not finished `finish_within` after its first attempt's start
    (retries and the error action included) raises ExecutionOverran. None: not watched."""

    start_within: timedelta | None = None
    finish_within: timedelta | None = None

    def __bool__(self) -> bool:
        return self.start_within is not None or self.finish_within is not None


@dataclass(frozen=True)
class ExecutionPolicy:
    overlap: str = OVERLAP_ALLOW
    missed: str = MISSED_RUN_LATEST
    catch_up_window: timedelta = DEFAULT_CATCH_UP_WINDOW
    deadlines: Deadlines = Deadlines()

    @property
    def serial(self) -> bool:
        """Whether the job's executions must not overlap (Skip or BufferOne)."""
        return self.overlap != OVERLAP_ALLOW


DEFAULT = ExecutionPolicy()


def parse_policy(raw: Any) -> dict[str, Any]:
    """The canonical stored form of a request's `executionPolicy` (only the keys given)."""
    given = obj(raw, PATH)
    out: dict[str, Any] = {}
    if given.get("overlap") is not None:
        out["overlap"] = enums.parse(given["overlap"], OVERLAPS, f"{PATH}.overlap")
    if given.get("missed") is not None:
        out["missed"] = enums.parse(given["missed"], MISSEDS, f"{PATH}.missed")
    if given.get("catchUpWindow") is not None:
        where = f"{PATH}.catchUpWindow"
        window = parse_duration(given["catchUpWindow"], where)
        if not timedelta(0) < window <= MAX_CATCH_UP_WINDOW:
            raise BadRequest(
                f"{where}: must be more than 0 and at most {format_timespan(MAX_CATCH_UP_WINDOW)}"
            )
        out["catchUpWindow"] = format_timespan(window)
    if given.get("deadlines") is not None:
        out["deadlines"] = _parse_deadlines(given["deadlines"])
    return out


def _parse_deadlines(raw: Any) -> dict[str, str]:
    where = f"{PATH}.deadlines"
    given = obj(raw, where)
    out: dict[str, str] = {}
    for key in ("startWithin", "finishWithin"):
        if given.get(key) is None:
            continue
        value = parse_duration(given[key], f"{where}.{key}")
        if not timedelta(0) < value <= MAX_DEADLINE:
            raise BadRequest(
                f"{where}.{key}: must be more than 0 and at most {format_timespan(MAX_DEADLINE)}"
            )
        out[key] = format_timespan(value)
    if not out:
        raise BadRequest(f"{where}: give startWithin, finishWithin or both")
    return out


def render_policy(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The stored policy with its defaults filled in, as the API returns it."""
    policy = policy_of({"executionPolicy": stored})
    shown: dict[str, Any] = {
        "overlap": policy.overlap,
        "missed": policy.missed,
        "catchUpWindow": format_timespan(policy.catch_up_window),
    }
    if policy.deadlines:
        shown["deadlines"] = render_deadlines(policy.deadlines)
    return shown


def render_deadlines(deadlines: Deadlines) -> dict[str, str]:
    """The deadlines given, as TimeSpans."""
    shown: dict[str, str] = {}
    if deadlines.start_within is not None:
        shown["startWithin"] = format_timespan(deadlines.start_within)
    if deadlines.finish_within is not None:
        shown["finishWithin"] = format_timespan(deadlines.finish_within)
    return shown


def policy_of(definition: Mapping[str, Any]) -> ExecutionPolicy:
    """A stored job definition's policy (the defaults when it has none; the engine reads stored
    values, which the API validated, and takes a default for anything unreadable)."""
    raw = definition.get("executionPolicy")
    if not isinstance(raw, dict):
        return DEFAULT
    overlap = enums.find(raw.get("overlap"), OVERLAPS) or OVERLAP_ALLOW
    missed = enums.find(raw.get("missed"), MISSEDS) or MISSED_RUN_LATEST
    window = _stored_duration(raw.get("catchUpWindow")) or DEFAULT_CATCH_UP_WINDOW
    return ExecutionPolicy(overlap, missed, window, deadlines_of(raw.get("deadlines")))


def deadlines_of(raw: Any) -> Deadlines:
    """Stored deadlines (none when absent or unreadable)."""
    if not isinstance(raw, dict):
        return Deadlines()
    return Deadlines(
        _stored_duration(raw.get("startWithin")), _stored_duration(raw.get("finishWithin"))
    )


def _stored_duration(value: Any) -> timedelta | None:
    if not isinstance(value, str):
        return None
    try:
        return read_duration(value)
    except ValueError:
        return None


def missed_runs(missed: Sequence[datetime], now: datetime, policy: ExecutionPolicy) -> list[bool]:
    """Of a job's executions `missed` (oldest first, all due by `now` and found more than the
    grace period late), which ones its policy runs (True) rather than records as Postponed:
    the latest (`RunLatest`), those inside `catchUpWindow` (`RunAll`), none (`Skip`). What the
    engine decides (`engine/missed.py`), for previews."""
    if policy.missed == MISSED_SKIP:
        return [False] * len(missed)
    if policy.missed == MISSED_RUN_ALL:
        start = now - policy.catch_up_window
        return [instant >= start for instant in missed]
    return [i == len(missed) - 1 for i in range(len(missed))]


def describe_policy(policy: ExecutionPolicy) -> str:
    """One line for people: `overlap Skip, missed RunAll (catchUpWindow 02:00:00)`."""
    shown = f"overlap {policy.overlap}, missed {policy.missed}"
    if policy.missed == MISSED_RUN_ALL:
        shown += f" (catchUpWindow {format_timespan(policy.catch_up_window)})"
    if policy.deadlines:
        given = render_deadlines(policy.deadlines).items()
        shown += ", deadlines " + " ".join(f"{key} {value}" for key, value in given)
    return shown
