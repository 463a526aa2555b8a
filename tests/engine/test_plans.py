"""The engine's plan cache: bounded, least recently used evicted first, one plan per job."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from horarium.engine.plans import ONE_TIME, Plans

SET_AT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def hourly(minute: int = 0) -> dict[str, Any]:
    return {
        "startTime": f"2026-03-02T08:{minute:02d}:00Z",
        "recurrence": {"frequency": "Hour", "interval": 1},
    }


def test_a_kept_plan_is_compiled_once() -> None:
    plans = Plans(10)
    first = plans.get(1, 1, SET_AT, hourly())
    assert plans.get(1, 1, SET_AT, hourly()) is first
    assert first.after(SET_AT) == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_the_cache_never_holds_more_than_its_size() -> None:
    plans = Plans(3)
    for job in range(1, 11):
        plans.get(job, 1, SET_AT, hourly(job))
    assert len(plans) == 3


def test_a_full_cache_evicts_the_least_recently_used_plan() -> None:
    plans = Plans(2)
    one = plans.get(1, 1, SET_AT, hourly(1))
    two = plans.get(2, 1, SET_AT, hourly(2))
    assert plans.get(1, 1, SET_AT, hourly(1)) is one  # job 2 is now the least recently used
    plans.get(3, 1, SET_AT, hourly(3))
    assert plans.get(1, 1, SET_AT, hourly(1)) is one
    assert plans.get(2, 1, SET_AT, hourly(2)) is not two  # evicted: compiled again


def test_a_job_that_keeps_running_is_a_hit_after_many_others_were_evicted() -> None:
    plans = Plans(3)
    often = plans.get(1, 1, SET_AT, hourly(1))
    for job in range(2, 50):
        plans.get(job, 1, SET_AT, hourly(job % 60))
        assert plans.get(1, 1, SET_AT, hourly(1)) is often
    assert len(plans) == 3


def test_a_new_version_of_a_job_replaces_its_kept_plan() -> None:
    plans = Plans(10)
    old = plans.get(1, 1, SET_AT, hourly(0))
    new = plans.get(1, 2, SET_AT, hourly(30))
    assert new is not old
    assert new.after(SET_AT) == datetime(2026, 3, 2, 8, 30, tzinfo=UTC)
    assert len(plans) == 1
    assert plans.get(1, 2, SET_AT, hourly(30)) is new


def test_a_schedule_set_again_is_compiled_again() -> None:
    plans = Plans(10)
    before = plans.get(1, 1, SET_AT, hourly())
    later = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    assert plans.get(1, 1, later, hourly()) is not before


def test_one_time_jobs_take_no_room() -> None:
    plans = Plans(10)
    assert plans.get(1, 1, SET_AT, {"startTime": "2026-03-02T08:00:00Z"}) is ONE_TIME
    assert len(plans) == 0


def test_size_zero_keeps_nothing() -> None:
    plans = Plans(0)
    first = plans.get(1, 1, SET_AT, hourly())
    assert plans.get(1, 1, SET_AT, hourly()) is not first
    assert len(plans) == 0


def test_a_negative_size_is_refused() -> None:
    with pytest.raises(ValueError, match="plan cache size"):
        Plans(-1)
