"""Sending notifications (`docs/engine.md`, "Notifications"): a JSON POST signed with an
HMAC-SHA256 of the exact body under the notification's secret, as
`x-horarium-signature: sha256=<hex>`, through a session of its own (so that notifications never
take the connections executions use) that obeys the outbound policy (`--outbound-deny`,
`--outbound-allow`) as actions do. A 2xx answer is a delivery; redirects are not followed."""

from __future__ import annotations

import hashlib
import hmac
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import aiohttp

from horarium.actions.outbound import OutboundPolicy, OutboundRefused
from horarium.actions.sessions import guarded_session

SIGNATURE = "x-horarium-signature"
CONNECTIONS = 20  # notifications sent at once by one process


def signature(secret: str, body: bytes) -> str:
    """The `x-horarium-signature` value of `body` under `secret`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Sent:
    """How one POST went: `ok` (a 2xx answer); `final`: trying again cannot help (the outbound
    policy refuses the address); `detail` says what happened (no secret in it)."""

    ok: bool
    detail: str
    final: bool = False


class WebhookSender:
    def __init__(self, deny: tuple[str, ...], allow: tuple[str, ...], timeout: float) -> None:
        self._policy = OutboundPolicy.parse(deny, allow)
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._session: aiohttp.ClientSession | None = None
        self._closing = AsyncExitStack()

    async def __aenter__(self) -> Self:
        self._session = await self._closing.enter_async_context(
            guarded_session(self._policy, CONNECTIONS)
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._session = None
        await self._closing.aclose()

    async def post(
        self, uri: str, body: bytes, secret: str | None, event: str, delivery: str
    ) -> Sent:
        """POST `body`, signed under `secret` (None: a Slack, Teams or PagerDuty body, which
        their services do not check: sent without the x-horarium headers)."""
        assert self._session is not None, "use WebhookSender inside 'async with'"
        headers = {"content-type": "application/json; charset=utf-8"}
        if secret is not None:
            headers[SIGNATURE] = signature(secret, body)
            headers["x-horarium-event"] = event
            headers["x-horarium-delivery"] = delivery
        try:
            async with self._session.post(
                uri, data=body, headers=headers, timeout=self._timeout, allow_redirects=False
            ) as response:
                if 200 <= response.status < 300:
                    return Sent(True, f"HTTP {response.status}")
                return Sent(False, f"HTTP {response.status} {response.reason or ''}".strip())
        except OutboundRefused as exc:
            return Sent(False, str(exc), final=True)
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, OutboundRefused):
                return Sent(False, str(exc.os_error), final=True)
            return Sent(False, f"cannot connect: {exc.os_error}")
        except TimeoutError:
            return Sent(False, f"no answer within {self._timeout.total:g} s")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return Sent(False, f"{type(exc).__name__}: {exc}")
