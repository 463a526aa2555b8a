"""Sending AMQP 1.0 messages with Qpid Proton, off the event loop.

Proton's blocking API runs in a small dedicated thread pool. Connections (with their sender
links) are kept per (URL, user, key) and lent to one thread at a time; one found broken on use
(the broker closed an idle connection) is replaced once by a fresh one before the send is
reported as failed. SASL PLAIN carries the key name and key, as Service Bus accepts.
Before a connection is opened, the broker host's addresses are checked against the outbound
policy (`horarium.actions.outbound`); Proton then resolves the name again by itself.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from proton import Delivery, Message, ProtonException, Timeout, Url
from proton.utils import BlockingConnection, BlockingSender, SendException

from horarium.actions.outbound import OutboundPolicy, OutboundRefused, check_broker

IDLE_SECONDS = 60.0  # an idle pooled connection older than this is replaced, not reused
LINKS_PER_CONNECTION = 64
WORKERS = 8


class AmqpSendError(Exception):
    """The broker refused the connection, the link or the message; the text says how."""


@dataclass(frozen=True)
class Endpoint:
    url: str
    user: str
    password: str


@dataclass
class _Pooled:
    connection: BlockingConnection
    last_used: float
    senders: OrderedDict[str, BlockingSender] = field(default_factory=OrderedDict)


class AmqpSender:
    def __init__(
        self, timeout: float, workers: int = WORKERS, policy: OutboundPolicy | None = None
    ) -> None:
        self._timeout = timeout
        self._policy = policy
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="horarium-amqp")
        self._idle: dict[Endpoint, list[_Pooled]] = {}
        self._lock = threading.Lock()
        self._closed = False

    async def send(self, endpoint: Endpoint, address: str, message: Message) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._send, endpoint, address, message)

    def close(self) -> None:
        """Close every pooled connection (blocking; call from a thread or at shutdown)."""
        with self._lock:
            self._closed = True
            pooled = [p for entries in self._idle.values() for p in entries]
            self._idle.clear()
        for entry in pooled:
            _close_quietly(entry.connection)
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _send(self, endpoint: Endpoint, address: str, message: Message) -> None:
        entry = self._checkout(endpoint)
        reused = entry is not None
        try:
            if entry is None:
                entry = self._connect(endpoint)
            try:
                self._deliver(entry, address, message)
            except AmqpSendError:
                if not reused or _still_open(entry.connection):
                    raise
                # A pooled connection the broker dropped while idle: one fresh connection.
                _close_quietly(entry.connection)
                entry = self._connect(endpoint)
                self._deliver(entry, address, message)
        except BaseException:
            if entry is not None:
                _close_quietly(entry.connection)
            raise
        self._checkin(endpoint, entry)

    def _connect(self, endpoint: Endpoint) -> _Pooled:
        self._check_broker(endpoint.url)
        try:
            connection = BlockingConnection(
                endpoint.url,
                timeout=self._timeout,
                user=endpoint.user,
                password=endpoint.password,
                allowed_mechs="PLAIN",
                sasl_enabled=True,
            )
        except ProtonException as exc:
            raise AmqpSendError(f"could not connect: {_reason(exc)}") from exc
        return _Pooled(connection, time.monotonic())

    def _check_broker(self, url: str) -> None:
        """Refuse a broker whose host resolves to an address the outbound policy denies."""
        if self._policy is None:
            return
        try:
            target = Url(url)  # type: ignore[no-untyped-call]  # the parser Proton connects by
            host, port = target.host, int(target.port)
        except (ProtonException, ValueError, TypeError):
            return  # not a URL Proton can use: connecting reports it
        try:
            check_broker(self._policy, host, port)
        except OutboundRefused as exc:
            raise AmqpSendError(f"connection to host '{host}' was refused: {exc}") from exc

    def _deliver(self, entry: _Pooled, address: str, message: Message) -> None:
        sender = entry.senders.get(address)
        try:
            if sender is None:
                sender = entry.connection.create_sender(address)
                entry.senders[address] = sender
                while len(entry.senders) > LINKS_PER_CONNECTION:
                    _, oldest = entry.senders.popitem(last=False)
                    _close_quietly(oldest)
            else:
                entry.senders.move_to_end(address)
            sender.send(message, timeout=self._timeout)
        except SendException as exc:
            entry.senders.pop(address, None)
            if exc.state == Delivery.REJECTED:
                state = "rejected"
            elif exc.state == Delivery.RELEASED:
                state = "released"
            else:
                state = f"did not accept ({exc.state})"
            raise AmqpSendError(f"the broker {state} the message") from exc
        except Timeout as exc:
            entry.senders.pop(address, None)
            raise AmqpSendError(f"no answer within {self._timeout:g} seconds ({exc})") from exc
        except ProtonException as exc:
            entry.senders.pop(address, None)
            raise AmqpSendError(_reason(exc)) from exc
        entry.last_used = time.monotonic()

    def _checkout(self, endpoint: Endpoint) -> _Pooled | None:
        stale: list[_Pooled] = []
        found: _Pooled | None = None
        with self._lock:
            entries = self._idle.get(endpoint, [])
            while entries:
                entry = entries.pop()
                if time.monotonic() - entry.last_used < IDLE_SECONDS:
                    found = entry
                    break
                stale.append(entry)
        for entry in stale:
            _close_quietly(entry.connection)
        return found

    def _checkin(self, endpoint: Endpoint, entry: _Pooled) -> None:
        with self._lock:
            if not self._closed:
                self._idle.setdefault(endpoint, []).append(entry)
                return
        _close_quietly(entry.connection)


def _still_open(connection: BlockingConnection) -> bool:
    return (
        not connection.disconnected
        and connection.conn is not None
        and not (connection.conn.state & connection.conn.REMOTE_CLOSED)
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text


def _close_quietly(closable: BlockingConnection | BlockingSender) -> None:
    try:
        closable.close()
    except Exception:  # already broken: nothing more to release
        pass
