"""Late lease renewals: when more than `LATE_SHARE` of a lease passes between two renewals of
what this process holds, the process or its database is too slow for `lease_seconds`. A lease
that runs out lets another process take the execution over and run it again, so this is said
in a warning (at most one a minute) before it happens, and the leases' length named."""

from __future__ import annotations

import logging

log = logging.getLogger("horarium.engine.leases")

LATE_SHARE = 2 / 3  # renewals come every third of a lease: two missed turns is late
WARN_EVERY = 60.0  # seconds: at most one warning this often


class RenewalWatch:
    """Watches the time between renewals (seconds of the event loop's clock)."""

    def __init__(self, lease_seconds: float, now: float) -> None:
        self._lease = lease_seconds
        self._fresh_at = now  # every lease this process holds was written at or after this
        self._warned_at: float | None = None

    def renewed(self, now: float, held: bool) -> None:
        """A renewal ended at `now`; `held`: it wrote leases (False: nothing was held, so no
        lease was at stake). Warns when it came late. A renewal that failed is not reported:
        the next one that succeeds counts from the last that did."""
        gap, self._fresh_at = now - self._fresh_at, now
        if not held or gap <= LATE_SHARE * self._lease:
            return
        if self._warned_at is not None and now - self._warned_at < WARN_EVERY:
            return
        self._warned_at = now
        log.warning(
            "leases were renewed %.1f s after the previous renewal, %.0f%% of --lease-seconds"
            " (%g s): this process or its database is too slow for that lease, and an"
            " execution whose lease runs out is taken over by another node and may run twice"
            " (raise --lease-seconds or relieve the host)",
            gap,
            100 * gap / self._lease,
            self._lease,
        )
