"""Retry policy and the attempt state machine: given what just happened, what comes next.

Pure logic, no I/O. An execution runs its main action; a failed attempt is retried under the
action's retry policy; when the main action has failed its last allowed attempt the execution is
*faulted* (the spec's faultedCount: "retried and failed as many times as the retry policy
states"), and its error action (if any) runs, under the same kind of policy, whatever it does
not changing that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from horarium.model.actions import (
    DEFAULT_RETRY_COUNT,
    DEFAULT_RETRY_INTERVAL,
    MAX_RETRY_COUNT,
    MIN_RETRY_INTERVAL,
)
from horarium.model.durations import read_duration
from horarium.store.runs.vocabulary import Finish, Phase, Retry, StartErrorAction, Step


@dataclass(frozen=True)
class RetryPolicy:
    retries: int  # attempts after the first
    interval: timedelta


def parse_interval(value: str) -> timedelta:
    """A `retryInterval`: .NET TimeSpan (`00:00:30`, `1.00:00:00`) or ISO 8601 (`PT30S`)."""
    try:
        return read_duration(value)
    except ValueError as e:
        raise ValueError(f"retryInterval: {value!r} {e}") from e


def retry_policy(raw: Mapping[str, Any] | None) -> RetryPolicy:
    """The effective policy. Absent: Fixed, 30 s, 4 retries (the live service's default).

    The API validates on the way in; here out-of-range values are clamped rather than refused,
    so a stored job always runs.
    """
    if raw is None:
        return RetryPolicy(DEFAULT_RETRY_COUNT, DEFAULT_RETRY_INTERVAL)
    kind = str(raw.get("retryType") or "Fixed").lower()
    if kind == "none":
        return RetryPolicy(0, DEFAULT_RETRY_INTERVAL)
    count = raw.get("retryCount")
    retries = DEFAULT_RETRY_COUNT if count is None else max(0, min(int(count), MAX_RETRY_COUNT))
    interval_raw = raw.get("retryInterval")
    interval = DEFAULT_RETRY_INTERVAL
    if interval_raw:
        try:
            interval = max(parse_interval(str(interval_raw)), MIN_RETRY_INTERVAL)
        except ValueError:
            interval = DEFAULT_RETRY_INTERVAL
    return RetryPolicy(retries, interval)


def policy_for(action: Mapping[str, Any], phase: Phase) -> RetryPolicy:
    """The error action uses its own `retryPolicy` when it has one, else the main action's."""
    if phase is Phase.ERROR:
        error = action.get("errorAction") or {}
        if error.get("retryPolicy") is not None:
            return retry_policy(error["retryPolicy"])
    return retry_policy(action.get("retryPolicy"))


def after_attempt(
    policy: RetryPolicy, phase: Phase, attempt: int, succeeded: bool, has_error_action: bool
) -> Step:
    """What follows attempt number `attempt` (0 = first try) of `phase`."""
    if succeeded:
        # The error action runs only once the main action has faulted the execution.
        return Finish(faulted=phase is Phase.ERROR)
    if attempt < policy.retries:
        return Retry(attempt + 1, policy.interval)
    if phase is Phase.MAIN and has_error_action:
        return StartErrorAction()
    return Finish(faulted=True)


def faults_execution(phase: Phase, step: Step) -> bool:
    """Whether the attempt that led to `step` faulted its execution: the main action's last
    allowed attempt failed (faultedCount counts the execution then, once)."""
    if phase is not Phase.MAIN:
        return False
    return isinstance(step, StartErrorAction) or (isinstance(step, Finish) and step.faulted)
