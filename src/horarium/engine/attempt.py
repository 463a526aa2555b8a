"""One attempt of an execution: run the action, and decide what follows (retry, error action,
finish) with the pure state machine in `policy`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from horarium.actions.base import ActionResult, ActionRunner, ExecutionContext
from horarium.engine.clock import Clock
from horarium.engine.ids import request_id
from horarium.engine.policy import after_attempt, faults_execution, policy_for
from horarium.engine.watchdog import Watchdog
from horarium.store.runs.vocabulary import Attempt, Claimed, JobInfo, Phase

log = logging.getLogger(__name__)


def collection_arm_id(job: JobInfo) -> str:
    return (
        f"/subscriptions/{job.subscription_id}/resourceGroups/{job.resource_group}"
        f"/providers/Microsoft.Scheduler/jobCollections/{job.collection}"
    )


async def run_attempt(
    actions: ActionRunner,
    execution: Claimed,
    clock: Clock,
    region: str,
    watchdog: Watchdog,
    started: datetime | None = None,
) -> Attempt:
    """Run the execution's next attempt with the job's current definition, starting at
    `started` (default: the clock's now); the watchdog ends an action that outlives its time
    limit."""
    action: Mapping[str, Any] = execution.job.definition.get("action") or {}
    phase = execution.phase
    error_action = action.get("errorAction")
    target = action if phase is Phase.MAIN else error_action
    collection_id = collection_arm_id(execution.job)
    context = ExecutionContext(
        job_id=f"{collection_id}/jobs/{execution.job.name}",
        collection_id=collection_id,
        execution_tag=execution.tag,
        client_request_id=request_id(),
        expected_time=execution.expected,
        region=region,
        attempt=execution.attempt,
        templated=bool(action.get("templated")),
    )
    if started is None:
        started = clock.now()
    if not target:
        result = ActionResult(False, "The job has no errorAction any more; nothing was run.")
    elif execution.job.unreadable:
        result = ActionResult(False, execution.job.unreadable)
    else:
        task = watchdog.start()
        expired = False
        try:
            try:
                result = await actions.run(target, context)
            finally:
                expired = watchdog.stop(task)
        except asyncio.CancelledError:
            if not expired:
                raise
            result = ActionResult(False, f"The action did not finish within {watchdog.limit:g} s.")
        except Exception as exc:  # an action must not take the engine down
            log.exception("action of job %s raised", context.job_id)
            result = ActionResult(False, f"Internal error: {type(exc).__name__}: {exc}")
    ended = clock.now()
    policy = policy_for(action, phase)
    has_error_action = bool(error_action)
    step = after_attempt(
        policy, phase, execution.attempt, result.succeeded, has_error_action, execution.tag
    )
    return Attempt(
        execution,
        started,
        ended,
        result.succeeded,
        result.message,
        step,
        faults=faults_execution(phase, step),
    )


def hard_time_limit(http_timeout: float) -> float:
    """An action enforces its own timeout; this is the backstop so a stuck action cannot hold
    a slot forever."""
    return http_timeout * 2 + 30
