"""The retry policy as users write it, and the attempt state machine (pure logic)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from horarium.engine.policy import (
    RetryPolicy,
    after_attempt,
    faults_execution,
    parse_interval,
    policy_for,
    retry_policy,
)
from horarium.store.runs.vocabulary import Finish, Phase, Retry, StartErrorAction


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:00:30", 30),
        ("00:01:00", 60),
        ("1.00:00:00", 86400),  # .NET TimeSpan: one day
        ("30.00:00:00", 30 * 86400),
        ("00:00:15.5", 15.5),
        ("PT30S", 30),
        ("PT1M", 60),
        ("P1D", 86400),
    ],
)
def test_retry_interval_accepts_timespan_and_iso(text: str, seconds: float) -> None:
    assert parse_interval(text) == timedelta(seconds=seconds)


def test_retry_interval_that_is_neither_is_refused_with_the_field_name() -> None:
    with pytest.raises(ValueError, match="retryInterval"):
        parse_interval("soon")


def test_absent_policy_is_fixed_thirty_seconds_four_retries() -> None:
    assert retry_policy(None) == RetryPolicy(4, timedelta(seconds=30))
    assert retry_policy({"retryType": "Fixed"}) == RetryPolicy(4, timedelta(seconds=30))


def test_policy_none_and_fixed_values() -> None:
    assert retry_policy({"retryType": "none"}).retries == 0
    fixed = {"retryType": "Fixed", "retryInterval": "00:02:00", "retryCount": 7}
    assert retry_policy(fixed) == RetryPolicy(7, timedelta(minutes=2))


def test_stored_values_out_of_range_are_clamped_not_fatal() -> None:
    wild = {"retryType": "Fixed", "retryInterval": "00:00:01", "retryCount": 99}
    assert retry_policy(wild) == RetryPolicy(20, timedelta(seconds=15))


def test_error_action_uses_its_own_policy_else_the_main_one() -> None:
    main = {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2}
    action = {"retryPolicy": main, "errorAction": {"type": "Http"}}
    assert policy_for(action, Phase.ERROR) == RetryPolicy(2, timedelta(seconds=20))
    own = {**action, "errorAction": {"type": "Http", "retryPolicy": {"retryType": "None"}}}
    assert policy_for(own, Phase.ERROR).retries == 0
    assert policy_for(own, Phase.MAIN).retries == 2


POLICY = RetryPolicy(2, timedelta(seconds=15))


def test_state_machine() -> None:
    assert after_attempt(POLICY, Phase.MAIN, 0, True, True) == Finish(faulted=False)
    assert after_attempt(POLICY, Phase.MAIN, 0, False, True) == Retry(1, timedelta(seconds=15))
    assert after_attempt(POLICY, Phase.MAIN, 2, False, True) == StartErrorAction()
    assert after_attempt(POLICY, Phase.MAIN, 2, False, False) == Finish(faulted=True)
    assert after_attempt(POLICY, Phase.ERROR, 1, False, True) == Retry(2, timedelta(seconds=15))
    assert after_attempt(POLICY, Phase.ERROR, 2, False, True) == Finish(faulted=True)
    # The error action runs once the main action has faulted the execution: it stays faulted.
    assert after_attempt(POLICY, Phase.ERROR, 2, True, True) == Finish(faulted=True)
    assert after_attempt(POLICY, Phase.ERROR, 0, True, True) == Finish(faulted=True)


def test_the_main_actions_last_failed_attempt_is_the_one_that_faults_the_execution() -> None:
    def faults(phase: Phase, attempt: int, succeeded: bool, has_error_action: bool) -> bool:
        step = after_attempt(POLICY, phase, attempt, succeeded, has_error_action)
        return faults_execution(phase, step)

    assert faults(Phase.MAIN, 2, False, True)  # the error action follows
    assert faults(Phase.MAIN, 2, False, False)
    assert not faults(Phase.MAIN, 1, False, True)  # a retry follows
    assert not faults(Phase.MAIN, 2, True, True)
    assert not faults(Phase.ERROR, 2, False, True)  # counted once, by the main action
    assert not faults(Phase.ERROR, 0, True, True)
