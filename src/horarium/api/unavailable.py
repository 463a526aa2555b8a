"""503 while the database cannot be reached or written: an ARM error `ServiceUnavailable` with
`Retry-After`, never a 500 or a traceback. A pure ASGI middleware around authentication (which
reads API keys from the database) and the routes. Any other error not answered yet is a 500
ARM error, logged with its traceback; the connection stays open for the client's next request
(letting the exception reach the server closed it, and the next request on it was reset).

The reason of a 503 is logged at WARNING (`horarium.api.unavailable`), one line per `LOG_EVERY`
seconds of outage however many requests are refused."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from horarium.api.wire import arm_error, internal_error
from horarium.store.core.outages import cannot_write, failing, is_outage, one_line

log = logging.getLogger(__name__)

RETRY_AFTER = 5  # seconds a client is told to wait
LOG_EVERY = 30.0  # seconds between two warnings of one outage
MESSAGE = (
    "The service cannot reach its database at the moment; nothing was changed."
    f" Try again in a few seconds (Retry-After: {RETRY_AFTER})."
)
FULL_MESSAGE = (
    "The service's database cannot store anything at the moment (its disk is full, or it is"
    " read-only); nothing of this request was stored. Try again once an operator has freed"
    f" space (Retry-After: {RETRY_AFTER})."
)


class Unavailable:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._logged_at = float("-inf")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            if started:
                raise
            if not is_outage(exc):
                log.error("unexpected error", exc_info=exc)
                await internal_error()(scope, receive, send)
                return
            self._lost(exc)
            message = FULL_MESSAGE if cannot_write(exc) else MESSAGE
            response = arm_error(503, "ServiceUnavailable", message)
            response.headers["Retry-After"] = str(RETRY_AFTER)
            await response(scope, receive, send)

    def _lost(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY:
            self._logged_at = now
            log.warning(
                "the database cannot be %s (%s): answering 503", failing(exc), one_line(exc)
            )
