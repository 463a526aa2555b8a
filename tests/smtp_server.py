"""A real SMTP server on 127.0.0.1 for tests (aiosmtpd) that takes one login and keeps every
message it receives.

    with smtp_server("ops", "pw") as (inbox, port):
        ...  # smtp://ops:pw@127.0.0.1:{port}; inbox.envelopes, inbox.messages()
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword

from tests.support import free_port


class Inbox:
    """aiosmtpd's handler: each message's envelope, as received."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 OK"

    def messages(self) -> list[tuple[list[str], EmailMessage]]:
        """Each message's recipients and the message, parsed."""
        out = []
        for envelope in list(self.envelopes):
            parsed = message_from_bytes(bytes(envelope.content or b""), policy=policy.default)
            assert isinstance(parsed, EmailMessage)
            out.append((list(envelope.rcpt_tos), parsed))
        return out


@contextmanager
def smtp_server(login: str, password: str) -> Iterator[tuple[Inbox, int]]:
    """The server and its port, taking only `login` / `password` (AUTH LOGIN or PLAIN)."""
    wanted = (login.encode(), password.encode())

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, auth: Any) -> Any:
        given = (auth.login, auth.password) if isinstance(auth, LoginPassword) else None
        return AuthResult(success=given == wanted, handled=False)

    inbox = Inbox()
    port = free_port()
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=authenticate,
        auth_require_tls=False,  # loopback only: the mailer sends a password in clear to no other
    )
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()
