"""A real SMTP server on 127.0.0.1 for tests (aiosmtpd) that takes one login and keeps every
message it receives; in clear, or with TLS (STARTTLS required, or TLS from the start).

    with smtp_server("ops", "pw") as (inbox, port):
        ...  # smtp://ops:pw@127.0.0.1:{port}; inbox.envelopes, inbox.messages()
    with smtp_server("ops", "pw", tls=context, implicit_tls=True) as (inbox, port):
        ...  # smtps://ops:pw@127.0.0.1:{port}; inbox.encrypted
"""

from __future__ import annotations

import ssl
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
        self.encrypted: list[bool] = []  # per message: did it travel over TLS

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        # STARTTLS sets the session's `ssl`; TLS from the first byte shows on the transport.
        upgraded = session.ssl is not None
        self.encrypted.append(upgraded or server.transport.get_extra_info("sslcontext") is not None)
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
def smtp_server(
    login: str, password: str, tls: ssl.SSLContext | None = None, implicit_tls: bool = False
) -> Iterator[tuple[Inbox, int]]:
    """The server and its port, taking only `login` / `password` (AUTH LOGIN or PLAIN). With a
    server-side `tls` context: STARTTLS required before anything else, or with `implicit_tls`
    TLS from the first byte (smtps)."""
    wanted = (login.encode(), password.encode())

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, auth: Any) -> Any:
        given = (auth.login, auth.password) if isinstance(auth, LoginPassword) else None
        return AuthResult(success=given == wanted, handled=False)

    inbox = Inbox()
    port = free_port()
    # In clear the login is taken too: loopback only (the mailer sends a password in clear to
    # no other host).
    secured: dict[str, Any] = {"auth_require_tls": False}
    if tls is not None and implicit_tls:
        secured = {"ssl_context": tls, "auth_require_tls": False}  # TLS from the first byte
    elif tls is not None:
        secured = {"tls_context": tls, "require_starttls": True, "auth_require_tls": True}
    controller = Controller(
        inbox, hostname="127.0.0.1", port=port, authenticator=authenticate, **secured
    )
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()
