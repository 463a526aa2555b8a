"""The audit log: one event `api.write` on logger `horarium.audit` for every write to the
management API (PUT, PATCH, DELETE, POST except the read-only preview `POST …/upcoming` and
check-ins, `/ping/…`), refused ones too, with the fields

    {"principal": "ci-deploy", "method": "PUT", "path": "/subscriptions/…/jobs/j", "status": 201}

(`horarium.logs`: after the event name in text logs, keys of the line's object in JSON logs).
`principal` is the key's name or the token's subject ("-": not authenticated); never the token.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from horarium.logs import event

log = logging.getLogger("horarium.audit")

WRITE_METHODS = frozenset({"PUT", "PATCH", "DELETE", "POST"})


def is_write(method: str, path: str) -> bool:
    """A write to the management API; check-ins (`/ping/…`) are not (their path holds their
    token, which no log may show)."""
    return (
        method in WRITE_METHODS
        and not (method == "POST" and path.rstrip("/").lower().endswith("/upcoming"))
        and not path.lower().startswith("/ping/")
    )


class Audit:
    """ASGI middleware: logs each write with its caller and the status it got, as the answer
    starts (so the line is written before the caller has the answer), or 500 when the app
    failed before answering."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_write(scope["method"], scope["path"]):
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})
        logged = False

        async def logging_status(message: Message) -> None:
            nonlocal logged
            if message["type"] == "http.response.start" and not logged:
                logged = True
                _log(scope, message["status"])
            await send(message)

        try:
            await self.app(scope, receive, logging_status)
        except BaseException:
            if not logged:
                _log(scope, 500)
            raise


def _log(scope: Scope, status: int) -> None:
    principal = scope["state"].get("principal")
    event(
        log,
        logging.INFO,
        "api.write",
        principal=principal.name if principal is not None else "-",
        method=scope["method"],
        path=scope["path"],
        status=status,
    )
