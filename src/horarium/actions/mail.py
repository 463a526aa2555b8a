"""Sending email notifications through the operator's SMTP server (`--smtp-url`, `--smtp-from`;
`docs/engine.md`, "Notifications"), with aiosmtplib.

`smtp://` upgrades the connection with STARTTLS when the server offers it, and then only logs
in: a password is never sent over a connection in clear to a server that is not on a loopback
address (the start-up says so once). `smtps://` speaks TLS from the start. The server's address
is checked against the outbound policy (`--outbound-deny`, `--outbound-allow`) as every
channel's is. The URL's password is never logged: messages name the server by `shown`."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

import aiosmtplib

from horarium.actions.outbound import OutboundPolicy, OutboundRefused, verdict
from horarium.actions.webhooks import Sent
from horarium.loopback import is_loopback

SCHEMES = {"smtp": 25, "smtps": 465}


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    tls: bool  # smtps: TLS from the start
    username: str | None
    password: str | None

    @property
    def shown(self) -> str:
        """The server as logs and messages name it: no credentials."""
        return f"{'smtps' if self.tls else 'smtp'}://{self.host}:{self.port}"


def parse_smtp_url(url: str) -> SmtpServer:
    """`--smtp-url`; raises ValueError naming the option and the rule (never the password)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise ValueError("--smtp-url: not a URL (smtp://[user:password@]host[:port])") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or not parts.hostname:
        raise ValueError(
            f"--smtp-url: must be smtp://[user:password@]host[:port] or smtps://… (scheme"
            f" {scheme or 'missing'!r}, host {parts.hostname or 'missing'!r})"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("--smtp-url: takes no path, query or fragment")
    username = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    if password is not None and not username:
        raise ValueError("--smtp-url: a password needs a user name (smtp://user:password@host)")
    return SmtpServer(
        host=parts.hostname,
        port=port or SCHEMES[scheme],
        tls=scheme == "smtps",
        username=username,
        password=password,
    )


def sender_address(server: SmtpServer, given: str | None) -> str:
    """`--smtp-from`, else horarium@ the server's host."""
    return given or f"horarium@{server.host}"


def smtp_warnings(url: str | None) -> list[str]:
    """Start-up warnings about --smtp-url (raises ValueError when it is malformed)."""
    if url is None:
        return []
    server = parse_smtp_url(url)
    if server.password is not None and not server.tls and not is_loopback(server.host):
        return [
            f"--smtp-url {server.shown} holds a password over smtp://: it is sent only after"
            " STARTTLS, so mail is not sent if the server does not offer it; smtps:// speaks"
            " TLS from the start."
        ]
    return []


class Mailer:
    """Sends one message per call; a connection each (notifications are rare)."""

    def __init__(self, url: str, sender: str | None, policy: OutboundPolicy, timeout: float):
        self.server = parse_smtp_url(url)
        self.sender = sender_address(self.server, sender)
        self._policy = policy
        self._timeout = timeout

    async def send(self, message: EmailMessage) -> Sent:
        server = self.server
        try:
            sock = await self._connect()
        except OutboundRefused as exc:
            return Sent(False, str(exc), final=True)
        except TimeoutError:
            return Sent(False, f"{server.shown}: no connection within {self._timeout:g} s")
        except OSError as exc:
            return Sent(False, f"{server.shown}: cannot connect: {exc.strerror or exc}")
        smtp = aiosmtplib.SMTP(
            hostname=server.host,  # for TLS: the name the certificate must hold
            sock=sock,
            use_tls=server.tls,
            start_tls=None,  # STARTTLS when the server offers it
            timeout=self._timeout,
        )
        try:
            await smtp.connect()
            try:
                if server.username is not None:
                    secure = server.tls or smtp.get_transport_info("sslcontext") is not None
                    if not secure and not is_loopback(server.host):
                        return Sent(
                            False,
                            f"{server.shown} offers no STARTTLS: the password is not sent in clear",
                        )
                    await smtp.login(server.username, server.password or "")
                refused, _ = await smtp.send_message(message)
            finally:
                smtp.close()
        except aiosmtplib.SMTPRecipientsRefused as exc:
            return Sent(False, f"{server.shown} refused every recipient: {exc}", final=True)
        except aiosmtplib.SMTPAuthenticationError as exc:
            return Sent(False, f"{server.shown} refused the login: {exc.code}")
        except aiosmtplib.SMTPResponseException as exc:
            final = 500 <= exc.code < 600
            return Sent(False, f"{server.shown} answered {exc.code} {exc.message}", final=final)
        except (aiosmtplib.SMTPException, OSError) as exc:
            return Sent(False, f"{server.shown}: {type(exc).__name__}: {exc}")
        finally:
            sock.close()
        if refused:
            return Sent(True, f"{server.shown} accepted it but refused {', '.join(refused)}")
        return Sent(True, f"{server.shown} accepted it")

    async def _connect(self) -> socket.socket:
        """A socket connected to the first address of the server the policy allows."""
        loop = asyncio.get_running_loop()
        server = self.server
        answers = await loop.getaddrinfo(server.host, server.port, type=socket.SOCK_STREAM)
        refused: list[tuple[str, str]] = []
        last: OSError | None = None
        async with asyncio.timeout(self._timeout):
            for family, kind, proto, _, sockaddr in answers:
                label = verdict(self._policy, str(sockaddr[0]))
                if label is not None:
                    refused.append((str(sockaddr[0]), label))
                    continue
                sock = socket.socket(family, kind, proto)
                sock.setblocking(False)
                try:
                    await loop.sock_connect(sock, sockaddr)
                    return sock
                except OSError as exc:
                    sock.close()
                    last = exc
        if last is not None:
            raise last
        raise OutboundRefused(refused)
