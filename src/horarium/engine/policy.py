"""Retry policy and the attempt state machine: given what just happened, what comes next.

Pure logic, no I/O. An execution runs its main action; a failed attempt is retried under the
action's retry policy; when the main action has failed its last allowed attempt the execution is
*faulted* (the spec's faultedCount: "retried and failed as many times as the retry policy
states"), and its error action (if any) runs, under the same kind of policy, whatever it does
not changing that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from horarium.model.actions import (
    DEFAULT_MAX_RETRY_INTERVAL,
    DEFAULT_RETRY_COUNT,
    DEFAULT_RETRY_INTERVAL,
    MIN_RETRY_INTERVAL,
    allowed_retries,
)
from horarium.model.durations import read_duration
from horarium.store.runs.vocabulary import Finish, Phase, Retry, StartErrorAction, Step

JITTER = 0.1  # an exponential wait varies by up to this fraction either way


@dataclass(frozen=True)
class RetryPolicy:
    retries: int  # attempts after the first
    interval: timedelta  # Fixed: every wait; Exponential: the first
    max_interval: timedelta | None = None  # Exponential: the longest wait; None: Fixed

    def delay(self, retry: int, seed: str) -> timedelta:
        """The wait before retry number `retry` (1 = the first retry). Exponential: `interval`
        doubled each time, at most `max_interval`, varied by up to ±JITTER by `seed` (the same
        seed and retry give the same wait), never above `max_interval`."""
        if self.max_interval is None:
            return self.interval
        cap = self.max_interval.total_seconds()
        doubled = min(self.interval.total_seconds() * 2.0 ** min(retry - 1, 64), cap)
        return timedelta(seconds=min(doubled * (1 + jitter(seed, retry)), cap))


def jitter(seed: str, retry: int) -> float:
    """A fraction in [-JITTER, JITTER], spread evenly over seeds and fixed by (seed, retry)."""
    digest = hashlib.blake2b(f"{seed}:{retry}".encode(), digest_size=8).digest()
    unit = int.from_bytes(digest) / 2**64  # [0, 1)
    return (2 * unit - 1) * JITTER


def parse_interval(value: str) -> timedelta:
    """A `retryInterval`: .NET TimeSpan (`00:00:30`, `1.00:00:00`) or ISO 8601 (`PT30S`)."""
    try:
        return read_duration(value)
    except ValueError as e:
        raise ValueError(f"retryInterval: {value!r} {e}") from e


def retry_policy(raw: Mapping[str, Any] | None) -> RetryPolicy:
    """The effective policy. Absent: Fixed, 30 s, 4 retries (the live service's default).
    Exponential: `maxRetryInterval` absent is DEFAULT_MAX_RETRY_INTERVAL, and never shorter than
    the interval.

    The API validates on the way in; here out-of-range values are clamped rather than refused,
    so a stored job always runs.
    """
    if raw is None:
        return RetryPolicy(DEFAULT_RETRY_COUNT, DEFAULT_RETRY_INTERVAL)
    kind = str(raw.get("retryType") or "Fixed").lower()
    if kind == "none":
        return RetryPolicy(0, DEFAULT_RETRY_INTERVAL)
    retries = allowed_retries(raw)
    interval_raw = raw.get("retryInterval")
    interval = DEFAULT_RETRY_INTERVAL
    if interval_raw:
        try:
            interval = max(parse_interval(str(interval_raw)), MIN_RETRY_INTERVAL)
        except ValueError:
            interval = DEFAULT_RETRY_INTERVAL
    if kind != "exponential":
        return RetryPolicy(retries, interval)
    longest_raw = raw.get("maxRetryInterval")
    longest = DEFAULT_MAX_RETRY_INTERVAL
    if longest_raw:
        try:
            longest = read_duration(str(longest_raw))
        except ValueError:
            longest = DEFAULT_MAX_RETRY_INTERVAL
    return RetryPolicy(retries, interval, max(longest, interval))


def policy_for(action: Mapping[str, Any], phase: Phase) -> RetryPolicy:
    """The error action uses its own `retryPolicy` when it has one, else the main action's."""
    if phase is Phase.ERROR:
        error = action.get("errorAction") or {}
        if error.get("retryPolicy") is not None:
            return retry_policy(error["retryPolicy"])
    return retry_policy(action.get("retryPolicy"))


def after_attempt(
    policy: RetryPolicy,
    phase: Phase,
    attempt: int,
    succeeded: bool,
    has_error_action: bool,
    tag: str = "",
) -> Step:
    """What follows attempt number `attempt` (0 = first try) of `phase`; `tag`, the execution
    tag, seeds the jitter of exponential waits."""
    if succeeded:
        # The error action runs only once the main action has faulted the execution.
        return Finish(faulted=phase is Phase.ERROR)
    if attempt < policy.retries:
        return Retry(attempt + 1, policy.delay(attempt + 1, f"{tag}:{phase}"))
    if phase is Phase.MAIN and has_error_action:
        return StartErrorAction()
    return Finish(faulted=True)


def faults_execution(phase: Phase, step: Step) -> bool:
    """Whether the attempt that led to `step` faulted its execution: the main action's last
    allowed attempt failed (faultedCount counts the execution then, once)."""
    if phase is not Phase.MAIN:
        return False
    return isinstance(step, StartErrorAction) or (isinstance(step, Finish) and step.faulted)
