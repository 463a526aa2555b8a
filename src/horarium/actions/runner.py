"""`Actions`: the process-wide action runner the engine calls (one attempt per call).

    async with Actions(settings) as actions:
        result = await actions.run(job_action, context)

It owns the shared clients: one aiohttp session (HTTP actions, OAuth tokens, Storage queues),
the client-certificate and token caches, and the AMQP sender for Service Bus. Every connection
they open passes the outbound policy (`--outbound-deny` / `--outbound-allow`). `run` never
raises for a failed execution: bad input, refusals and network errors come back as
`ActionResult(succeeded=False, message=…)`, with every secret of the action masked. A templated
execution's placeholders are filled before the action runs.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Self

from aiohttp.abc import AbstractResolver

from horarium.actions.amqp import AmqpSender
from horarium.actions.base import ActionResult, ExecutionContext
from horarium.actions.fields import ActionInputError, lookup
from horarium.actions.http import HttpActions
from horarium.actions.http_history import cut_body
from horarium.actions.oauth import TokenCache
from horarium.actions.outbound import OutboundPolicy
from horarium.actions.redact import redact
from horarium.actions.secrets_in import oauth_credentials, secrets_of
from horarium.actions.servicebus import ServiceBusActions
from horarium.actions.sessions import guarded_session
from horarium.actions.storage_queue import StorageQueueActions
from horarium.actions.templating import fill_action, template_values
from horarium.actions.tls import ClientCertificates
from horarium.config import Settings

log = logging.getLogger(__name__)

# Canonical type name (lower-cased key) and the prefix of its history messages.
LABELS = {
    "http": "Http Action",
    "https": "Http Action",
    "storagequeue": "StorageQueue Action",
    "servicebusqueue": "ServiceBusQueue Action",
    "servicebustopic": "ServiceBusTopic Action",
}


class Actions:
    def __init__(self, settings: Settings, resolver: AbstractResolver | None = None) -> None:
        """`resolver`: the DNS resolver behind the policy (default: aiohttp's own). A malformed
        outbound item raises OutboundPolicyError."""
        self._settings = settings
        self._policy = OutboundPolicy.parse(settings.outbound_deny, settings.outbound_allow)
        self._dns = resolver
        self._closing = AsyncExitStack()
        self._tokens: TokenCache | None = None
        self._http: HttpActions | None = None
        self._storage: StorageQueueActions | None = None
        self._amqp: AmqpSender | None = None
        self._servicebus: ServiceBusActions | None = None

    async def __aenter__(self) -> Self:
        session = await self._closing.enter_async_context(
            guarded_session(self._policy, max(self._settings.max_in_flight, 1), self._dns)
        )
        self._tokens = tokens = TokenCache(
            session, self._settings.aad_authority, self._settings.http_timeout
        )
        self._http = HttpActions(session, self._settings.http_timeout, ClientCertificates(), tokens)
        self._storage = StorageQueueActions(
            session, self._settings.storage_queue_url, self._settings.http_timeout
        )
        self._amqp = AmqpSender(self._settings.http_timeout, policy=self._policy)
        self._servicebus = ServiceBusActions(
            self._amqp,
            self._settings.servicebus_url,
            self._settings.servicebus_queue_address,
            self._settings.servicebus_topic_address,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._closing.aclose()
        if self._amqp is not None:
            await asyncio.to_thread(self._amqp.close)
            self._amqp = None

    async def run(self, action: Mapping[str, Any], context: ExecutionContext) -> ActionResult:
        kind = lookup(action, "type")
        key = kind.lower() if isinstance(kind, str) else ""
        label = LABELS.get(key, "Action")
        try:
            sent = fill_action(action, template_values(context)) if context.templated else action
            result = await self._start(key, sent, context)
        except ActionInputError as exc:
            result = ActionResult(False, f"{label} - invalid action: {exc}")
        except Exception as exc:  # a failed execution is a result, whatever went wrong
            trace = "".join(traceback.format_exception(exc))
            log.error("%s failed unexpectedly: %s", label, redact(trace, self._secrets(action)))
            result = ActionResult(False, f"{label} - unexpected error: {type(exc).__name__}: {exc}")
        return _masked(result, self._secrets(action))

    def _secrets(self, action: Mapping[str, Any]) -> list[str]:
        """What no message may show: the action's secrets and the bearer tokens obtained for it."""
        found = secrets_of(action)
        credentials = oauth_credentials(action) if found else None
        if credentials is not None and self._tokens is not None:
            found += self._tokens.recent(*credentials)
        return found

    def _start(
        self, key: str, action: Mapping[str, Any], context: ExecutionContext
    ) -> Awaitable[ActionResult]:
        """The action's coroutine, awaited by `run` (no extra frame for every resumption)."""
        if key in ("http", "https"):
            assert self._http is not None, "use Actions inside 'async with'"
            return self._http.run(action, context)
        if key == "storagequeue":
            assert self._storage is not None, "use Actions inside 'async with'"
            return self._storage.run(action, context)
        if key in ("servicebusqueue", "servicebustopic"):
            assert self._servicebus is not None, "use Actions inside 'async with'"
            return self._servicebus.run(action, context, topic=key == "servicebustopic")
        raise ActionInputError(
            "'action.type' must be one of Http, Https, StorageQueue, ServiceBusQueue, "
            "ServiceBusTopic"
        )


def _masked(result: ActionResult, secrets: list[str]) -> ActionResult:
    """`result` with every secret masked, and a response body cut after the masking."""
    if result.body_from is None:
        if not secrets:  # the common case: nothing to mask
            return result
        return ActionResult(result.succeeded, redact(result.message, secrets))
    head, body = result.message[: result.body_from], result.message[result.body_from :]
    return ActionResult(result.succeeded, redact(head, secrets) + cut_body(body, secrets))
