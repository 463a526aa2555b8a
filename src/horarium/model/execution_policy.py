"""`properties.executionPolicy` (Horarium): what happens when an execution falls due while the
job's previous one is unfinished (`overlap`), and to executions missed while the service was
down (`missed`, `catchUpWindow`). A job without it behaves as Azure Scheduler did: overlapping
executions run, and of missed executions the latest runs once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from horarium.model import enums
from horarium.model.durations import format_timespan, parse_duration, read_duration
from horarium.model.errors import BadRequest
from horarium.model.fields import obj

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

POLICY_SHAPE: dict[str, None] = {"overlap": None, "missed": None, "catchUpWindow": None}
PATH = "properties.executionPolicy"


@dataclass(frozen=True)
class ExecutionPolicy:
    overlap: str = OVERLAP_ALLOW
    missed: str = MISSED_RUN_LATEST
    catch_up_window: timedelta = DEFAULT_CATCH_UP_WINDOW

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
    return out


def render_policy(stored: Mapping[str, Any]) -> dict[str, Any]:
    """The stored policy with its defaults filled in, as the API returns it."""
    policy = policy_of({"executionPolicy": stored})
    return {
        "overlap": policy.overlap,
        "missed": policy.missed,
        "catchUpWindow": format_timespan(policy.catch_up_window),
    }


def policy_of(definition: Mapping[str, Any]) -> ExecutionPolicy:
    """A stored job definition's policy (the defaults when it has none; the engine reads stored
    values, which the API validated, and takes a default for anything unreadable)."""
    raw = definition.get("executionPolicy")
    if not isinstance(raw, dict):
        return DEFAULT
    overlap = enums.find(raw.get("overlap"), OVERLAPS) or OVERLAP_ALLOW
    missed = enums.find(raw.get("missed"), MISSEDS) or MISSED_RUN_LATEST
    window = DEFAULT_CATCH_UP_WINDOW
    if isinstance(raw.get("catchUpWindow"), str):
        try:
            window = read_duration(raw["catchUpWindow"])
        except ValueError:
            window = DEFAULT_CATCH_UP_WINDOW
    return ExecutionPolicy(overlap, missed, window)


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
    return shown
