"""Where an API write leaves a job's schedule: its state and `next_execution_at`.

The rules the engine relies on (docs/api.md, "Scheduling fields"):
- a write that sets the schedule (PUT, or a PATCH touching startTime / recurrence) plans the
  series from `created = schedule_set_at = now` and takes its first execution;
- a job enabled again (PATCH state, collection enable) takes the first execution at or after now;
  a one-time job that never ran runs at once;
- Disabled, Completed and Faulted jobs have no next execution; an Enabled job whose series is
  over (endTime passed, count reached) becomes Completed;
- an Enabled job in a collection that is not Enabled keeps its state but is not scheduled.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from horarium.model.enums import JobState
from horarium.model.errors import BadRequest
from horarium.recurrence import RESOLVED, Plan, RecurrenceError, plan

# Compiled series of definitions that list calendars, the most recently used kept: each request
# about a job compiles it again (its PUT, each listing of its upcoming runs), and compiling reads
# every calendar and finds the first run. They are compiled in the offload pool's
# single-threaded workers (`api/offload.py`).
KEPT_PLANS = 16
_kept: OrderedDict[tuple[str, datetime], Plan] = OrderedDict()


def compile_plan(definition: dict[str, Any], created: datetime) -> Plan:
    """The job's series; invalid timing is a 400 carrying the recurrence engine's message."""
    if not lists_calendars(definition):
        return _compiled(definition, created)
    key = (json.dumps(definition, sort_keys=True, default=str), created)
    found = _kept.get(key)
    if found is None:
        found = _kept[key] = _compiled(definition, created)
        if len(_kept) > KEPT_PLANS:
            _kept.popitem(last=False)
    else:
        _kept.move_to_end(key)
    return found


def _compiled(definition: dict[str, Any], created: datetime) -> Plan:
    try:
        return plan(definition, created=created)
    except RecurrenceError as e:
        raise BadRequest(f"properties.{e}") from e
    except (ValueError, OverflowError, ArithmeticError) as e:
        raise BadRequest(f"properties.recurrence: the schedule cannot be computed ({e})") from e


def check_schedule(definition: dict[str, Any], created: datetime) -> None:
    """`compile_plan` for its verdict alone: a 400 when the schedule cannot be computed."""
    compile_plan(definition, created)


def checked_timing(
    definition: dict[str, Any],
    *,
    state: str,
    schedule_set_at: datetime,
    now: datetime,
    executions_done: int,
    collection_enabled: bool,
    fresh: bool,
) -> Timing:
    """`timing`, the schedule validated whatever the state (a Disabled job's too): one step
    for a write that both checks and schedules a job."""
    if state != JobState.ENABLED:  # `timing` compiles an Enabled job's schedule itself
        check_schedule(definition, schedule_set_at)
    return timing(
        definition,
        state=state,
        schedule_set_at=schedule_set_at,
        now=now,
        executions_done=executions_done,
        collection_enabled=collection_enabled,
        fresh=fresh,
    )


def lists_calendars(definition: dict[str, Any]) -> bool:
    """The (resolved) definition lists exclusion calendars: computing its series may be costly
    (within the recurrence package's limits), so the API does it off the event loop."""
    return bool(definition.get(RESOLVED))


@dataclass(frozen=True)
class Timing:
    state: str
    next_execution_at: datetime | None


def timing(
    definition: dict[str, Any],
    *,
    state: str,
    schedule_set_at: datetime,
    now: datetime,
    executions_done: int,
    collection_enabled: bool,
    fresh: bool,
) -> Timing:
    """`fresh`: the schedule was just set (take the plan's first execution); otherwise the job
    resumes (take the first execution at or after `now`)."""
    if state != JobState.ENABLED:
        return Timing(state, None)
    series = compile_plan(definition, schedule_set_at)
    if series.count is not None and executions_done >= series.count:
        return Timing(JobState.COMPLETED, None)
    try:
        if fresh:
            upcoming = series.first
        else:
            upcoming = series.at_or_after(now)
            if upcoming is None and not series.recurring and executions_done == 0:
                upcoming = now  # a one-time job that never ran: run it now
    except (ValueError, OverflowError, ArithmeticError) as e:
        raise BadRequest(f"properties.recurrence: the schedule cannot be computed ({e})") from e
    if upcoming is None:
        return Timing(JobState.COMPLETED, None)
    if not collection_enabled:
        return Timing(JobState.ENABLED, None)
    return Timing(JobState.ENABLED, upcoming)
