"""The rate of check-ins per ping token: a token bucket per token digest, in this process
(each node of a cluster counts its own). `BURST` check-ins at once, then `PER_SECOND` a second
on average; past it a check-in is answered 429 with `Retry-After`. At most `TRACKED` tokens are
remembered (the least recently seen forgotten first), so memory stays bounded whatever the
tokens sent."""

from __future__ import annotations

import math
from collections import OrderedDict

BURST = 20
PER_SECOND = 1.0
TRACKED = 100_000


class PingLimiter:
    def __init__(self, burst: int = BURST, per_second: float = PER_SECOND) -> None:
        self.burst = float(burst)
        self.per_second = per_second
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def wait(self, key: str, now: float) -> int:
        """0 when a check-in under `key` may go now (and it is counted), else the seconds to
        wait (`now`: a monotonic clock's reading)."""
        tokens, seen = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - seen) * self.per_second)
        if tokens >= 1.0:
            self._remember(key, tokens - 1.0, now)
            return 0
        self._remember(key, tokens, now)
        return max(1, math.ceil((1.0 - tokens) / self.per_second))

    def _remember(self, key: str, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > TRACKED:
            self._buckets.popitem(last=False)
