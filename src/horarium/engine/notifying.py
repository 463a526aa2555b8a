"""The periodic task that delivers notifications (`docs/engine.md`, "Notifications"): every
`poll_interval` it looks up when the earliest one is due (an index lookup, no write lock) and,
once one is, takes a batch under a lease (`store.runs.outbox`), POSTs each to the targets that have
not accepted it yet (`actions.webhooks`; a slack, teams, pagerduty or email channel's message
rendered from the event's JSON by `actions.channels`, a mail sent by `actions.mail`; all at
once), and settles them: delivered ones go, the
others are tried again after `--notification-retry-seconds`, doubled after each failure, until
`--notification-attempts`. It runs beside the dispatcher, with its own connections, so a slow
or failing receiver never delays an execution. Failures are logged (WARNING, the target's
origin only: no path, query or secret) and counted (`observe.metrics`)."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.actions import channels
from horarium.actions.mail import Mailer
from horarium.actions.outbound import OutboundPolicy
from horarium.actions.webhooks import Sent, WebhookSender
from horarium.config import Settings
from horarium.engine.clock import Clock
from horarium.model.notifications import EMAIL, HORARIUM
from horarium.observe import metrics
from horarium.store.core.outages import is_outage
from horarium.store.runs import outbox

log = logging.getLogger(__name__)

BATCH = 50  # notifications taken per transaction
MAX_DELAY = 3600.0  # seconds: the longest wait between two attempts
LEASE_MARGIN = 60.0  # seconds a taken batch is held beyond the HTTP timeout


class Notifier:
    def __init__(self, db: AsyncEngine, clock: Clock, settings: Settings) -> None:
        self.db = db
        self.clock = clock
        self.settings = settings
        self.attempts = max(1, settings.notification_attempts)
        self.lease = timedelta(seconds=settings.http_timeout + LEASE_MARGIN)
        self._sender: WebhookSender | None = None
        self._mailer: Mailer | None = None
        if settings.smtp_url is not None:
            policy = OutboundPolicy.parse(settings.outbound_deny, settings.outbound_allow)
            self._mailer = Mailer(
                settings.smtp_url, settings.smtp_from, policy, settings.http_timeout
            )

    def delay(self, failures: int) -> float:
        """Seconds before the next attempt after `failures` failed ones."""
        base = max(0.0, self.settings.notification_retry_seconds)
        return float(min(MAX_DELAY, base * 2 ** min(failures - 1, 30)))

    async def run_forever(self) -> None:
        settings = self.settings
        async with WebhookSender(
            settings.outbound_deny, settings.outbound_allow, settings.http_timeout
        ) as sender:
            self._sender = sender
            while True:
                try:
                    taken = await self.deliver_once()
                except Exception as exc:
                    taken = 0
                    if not is_outage(exc):
                        log.exception("delivering notifications failed")
                    # else: the engine's other transactions report the outage, once
                if taken < BATCH:
                    await asyncio.sleep(settings.poll_interval)

    async def deliver_once(self) -> int:
        """Deliver the notifications due now (one batch); returns how many were taken."""
        now = self.clock.now()
        due = await outbox.next_due(self.db)
        if due is None or due > now:
            return 0
        taken = await outbox.take(self.db, now, BATCH, self.lease)
        if taken:
            settled = await asyncio.gather(*(self._deliver(p) for p in taken))
            await outbox.settle(self.db, settled)
        return len(taken)

    async def _deliver(self, pending: outbox.Pending) -> outbox.Settled:
        sender = self._sender
        assert sender is not None
        about = json.loads(pending.body)
        targets = pending.targets
        results = await asyncio.gather(*(self._send(sender, pending, about, t) for t in targets))
        attempt = pending.attempts + 1
        finished = list(pending.finished)
        retry = False
        for target, sent in zip(targets, results, strict=True):
            if sent.ok:
                metrics.NOTIFICATIONS_DELIVERED.labels(pending.event).inc()
                finished.append(target.key)
                continue
            metrics.NOTIFICATION_FAILURES.labels(pending.event).inc()
            final = sent.final or attempt >= self.attempts
            if final:
                metrics.NOTIFICATIONS_FAILED.labels(pending.event).inc()
                finished.append(target.key)
            else:
                retry = True
            log.warning(
                "notification %s of %s %s/%s to %s failed (attempt %d of %d): %s; %s",
                pending.event,
                "monitor" if "monitor" in about else "job",
                about.get("jobCollection"),
                about.get("monitor", about.get("job")),
                target.shown if target.format == HORARIUM else f"{target.format} {target.shown}",
                attempt,
                self.attempts,
                sent.detail,
                "given up" if final else f"next attempt in {self.delay(attempt):g} s",
            )
        if not retry:
            return outbox.Settled(pending.id, done=True)
        return outbox.Settled(
            pending.id,
            done=False,
            attempts=attempt,
            finished=finished,
            retry_at=self.clock.now() + timedelta(seconds=self.delay(attempt)),
        )

    async def _send(
        self,
        sender: WebhookSender,
        pending: outbox.Pending,
        about: dict[str, Any],
        target: outbox.Target,
    ) -> Sent:
        """One channel's delivery: the event's JSON signed (horarium), else its rendering."""
        delivery = str(about.get("id", ""))
        if target.format == EMAIL:
            if self._mailer is None:
                return Sent(False, "this process has no --smtp-url to send e-mail through")
            facts = channels.facts(about, pending.zone, self.settings.public_url)
            message = channels.email(facts, self._mailer.sender, list(target.to), delivery)
            return await self._mailer.send(message)
        if target.secret is None:
            return await _unreadable(target.unreadable)
        if target.format == HORARIUM:
            return await sender.post(
                target.uri, pending.body.encode(), target.secret, pending.event, delivery
            )
        facts = channels.facts(about, pending.zone, self.settings.public_url)
        body = channels.render(target.format, facts, about, target.secret)
        sent = await sender.post(target.uri, body, None, pending.event, delivery)
        return _without(sent, target.uri, target.secret) if not sent.ok else sent


def _without(sent: Sent, uri: str, secret: str | None) -> Sent:
    """`sent` with a webhook URL (a slack or teams channel's secret, path and all) or a routing
    key taken out of its detail, should a client error have quoted them."""
    detail = sent.detail
    path = urlsplit(uri).path
    for part in (uri, secret, path if len(path) > 1 else None):
        if part:
            detail = detail.replace(part, "/***")
    return replace(sent, detail=detail)


async def _unreadable(why: str | None) -> Sent:
    return Sent(False, why or "its secret cannot be read", final=True)
