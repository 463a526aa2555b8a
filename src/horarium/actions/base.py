"""The one interface every action type sits behind.

The engine hands an action (the `action` or `errorAction` object of a stored job definition, in
canonical form: property names and enum values spelled as in the 2016-03-01 spec, e.g.
``{"type": "Https", "request": {...}}``, ``{"type": "StorageQueue", "queueMessage": {...}}``)
and an `ExecutionContext` to `ActionRunner.run`, and gets an `ActionResult` back. An action never
raises for a failed execution: failures (HTTP status, timeout, TLS, broker errors) are results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class ExecutionContext:
    """Who runs and why; becomes the x-ms-scheduler-* headers / message envelope fields."""

    job_id: str  # ARM id of the job: /subscriptions/…/jobCollections/{c}/jobs/{j}
    collection_id: str  # ARM id of the job collection
    execution_tag: str  # the same for every attempt of one execution (receivers deduplicate)
    client_request_id: str  # new for every attempt
    expected_time: datetime  # aware UTC: when the execution was due
    region: str
    attempt: int = 0  # the history's retryCount: 0 for the first attempt of the action
    templated: bool = False  # fill the action's placeholders (`horarium.actions.templating`)


@dataclass(frozen=True)
class ActionResult:
    succeeded: bool
    # History message in the live service's form, e.g.
    # "Http Action - Response from host 'example.com': 'OK' Response Headers: … Body: …"
    message: str
    # Where the message's response body starts, when it ends with one: the runner masks the
    # secrets first, then cuts the body to its length (`http_history.BODY_CHARS`).
    body_from: int | None = None


class ActionRunner(Protocol):
    """What the engine calls. The implementation (horarium.actions.runner.Actions) is an async
    context manager holding the process-wide clients (HTTP session, token cache, AMQP links)."""

    async def run(self, action: Mapping[str, Any], context: ExecutionContext) -> ActionResult: ...
