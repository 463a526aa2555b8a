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


# -- Exponential backoff ------------------------------------------------------------------------

EXPONENTIAL = RetryPolicy(10, timedelta(seconds=30), timedelta(minutes=5))
TAGS = [f"{i:032x}" for i in range(500)]


def test_exponential_policy_as_users_write_it() -> None:
    raw = {
        "retryType": "exponential",
        "retryInterval": "PT20S",
        "maxRetryInterval": "00:05:00",
        "retryCount": 6,
    }
    assert retry_policy(raw) == RetryPolicy(6, timedelta(seconds=20), timedelta(minutes=5))


def test_exponential_without_a_cap_is_capped_at_one_day_or_the_interval() -> None:
    assert retry_policy({"retryType": "Exponential"}) == RetryPolicy(
        4, timedelta(seconds=30), timedelta(days=1)
    )
    long = {"retryType": "Exponential", "retryInterval": "2.00:00:00"}
    assert retry_policy(long).max_interval == timedelta(days=2)
    # Stored values the API refuses are clamped: a cap below the interval is the interval.
    low = {"retryType": "Exponential", "retryInterval": "PT1M", "maxRetryInterval": "PT20S"}
    assert retry_policy(low).max_interval == timedelta(minutes=1)
    garbled = {"retryType": "Exponential", "maxRetryInterval": "soon"}
    assert retry_policy(garbled).max_interval == timedelta(days=1)


def test_fixed_policy_waits_the_interval_whatever_the_tag() -> None:
    fixed = RetryPolicy(5, timedelta(seconds=45))
    assert {fixed.delay(retry, tag) for retry in (1, 3, 5) for tag in TAGS[:20]} == {
        timedelta(seconds=45)
    }


def test_exponential_waits_double_within_ten_percent_up_to_the_cap() -> None:
    for retry, nominal in [(1, 30), (2, 60), (3, 120), (4, 240), (5, 300), (9, 300)]:
        waits = [EXPONENTIAL.delay(retry, tag).total_seconds() for tag in TAGS]
        assert min(waits) >= nominal * 0.9, retry
        assert max(waits) <= min(nominal * 1.1, 300), retry


def test_exponential_jitter_spreads_the_waits_over_the_whole_band() -> None:
    waits = sorted(EXPONENTIAL.delay(2, tag).total_seconds() for tag in TAGS)
    assert waits[0] < 54.6 and waits[-1] > 65.4  # reaches both ends of 60 s ± 10 %
    assert 59 < sum(waits) / len(waits) < 61  # centred on the nominal wait
    assert len(set(waits)) > len(waits) * 0.95  # executions failing together spread out


def test_capped_waits_never_exceed_the_cap_but_still_vary() -> None:
    waits = [EXPONENTIAL.delay(8, tag) for tag in TAGS]
    assert max(waits) == timedelta(minutes=5)  # the upper half of the jitter meets the cap
    assert min(waits) < timedelta(seconds=275)
    assert all(wait >= timedelta(seconds=270) for wait in waits)


def test_exponential_waits_are_reproducible_from_the_tag_and_retry() -> None:
    assert EXPONENTIAL.delay(3, "a" * 32) == EXPONENTIAL.delay(3, "a" * 32)
    assert EXPONENTIAL.delay(3, "a" * 32) != EXPONENTIAL.delay(3, "b" * 32)
    assert EXPONENTIAL.delay(1, "a" * 32) * 4 != EXPONENTIAL.delay(3, "a" * 32)


def test_exponential_retries_follow_the_state_machine() -> None:
    policy = RetryPolicy(3, timedelta(seconds=20), timedelta(minutes=1))
    tag = "e927cf76d24da9625608248ce654cfa7"
    steps = [after_attempt(policy, Phase.MAIN, n, False, True, tag) for n in range(4)]
    assert [type(step) for step in steps] == [Retry, Retry, Retry, StartErrorAction]
    delays = [step.delay.total_seconds() for step in steps if isinstance(step, Retry)]
    assert [step.attempt for step in steps if isinstance(step, Retry)] == [1, 2, 3]
    for delay, nominal in zip(delays, (20, 40, 60), strict=True):
        assert nominal * 0.9 <= delay <= min(nominal * 1.1, 60)
    # The same execution failing the same way again waits the same; its error action's
    # retries draw their own jitter.
    again = after_attempt(policy, Phase.MAIN, 0, False, True, tag)
    assert again == steps[0]
    error = after_attempt(policy, Phase.ERROR, 0, False, True, tag)
    assert isinstance(error, Retry) and error.delay != delays[0]
    assert after_attempt(policy, Phase.MAIN, 1, True, True, tag) == Finish(faulted=False)
