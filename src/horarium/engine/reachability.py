"""The database as this process's engine sees it: reachable, or unreachable since when.

The dispatcher's rounds, the recorder's writes and the lease renewals report here how their
transactions ended. An outage (`store.core.outages.is_outage`) is logged once at WARNING when it
begins and once at INFO when a transaction succeeds again; meanwhile each caller waits
`failed(...)`'s back-off before trying again: doubling from BACKOFF_FIRST to BACKOFF_MAX, with
a random fifth either way so that the processes of a cluster do not reconnect in step."""

from __future__ import annotations

import logging
import random
import time

from horarium.store.core.outages import failing, is_outage, one_line

log = logging.getLogger(__name__)

BACKOFF_FIRST = 0.25  # seconds
BACKOFF_MAX = 5.0


class Reachability:
    def __init__(self) -> None:
        self._down_since: float | None = None
        self._failures = 0

    @property
    def reachable(self) -> bool:
        return self._down_since is None

    def failed(self, exc: BaseException) -> float | None:
        """After a transaction raised `exc`: seconds to wait before trying again when the
        database is unreachable; None when `exc` is another error (the caller's to handle)."""
        if not is_outage(exc):
            return None
        if self._down_since is None:
            self._down_since = time.monotonic()
            log.warning(
                "the database cannot be %s (%s); the engine retries until it answers",
                failing(exc),
                one_line(exc),
            )
        wait = min(BACKOFF_FIRST * 2.0**self._failures, BACKOFF_MAX)
        self._failures = min(self._failures + 1, 16)
        return wait * random.uniform(0.8, 1.2)

    def succeeded(self) -> None:
        """A transaction committed: the database answers."""
        if self._down_since is not None:
            log.info(
                "the database answers again after %.1f s; the engine carries on",
                time.monotonic() - self._down_since,
            )
            self._down_since = None
        self._failures = 0
