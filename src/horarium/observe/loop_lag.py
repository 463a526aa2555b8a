"""How late the event loop runs callbacks: a timer asks to wake every `INTERVAL` and notes how
much later it woke. A lag of more than a few milliseconds means something held the loop (work
that belongs on a thread), and every request waited that long too. The worst lag of the last
`WINDOW` seconds is the gauge `horarium_event_loop_lag_seconds` and the engine page's figure."""

from __future__ import annotations

import asyncio
import time
from collections import deque

from horarium.observe import metrics

INTERVAL = 0.25  # seconds between looks
WINDOW = 10.0  # seconds the reported lag covers


class LoopLag:
    """The worst lag seen over the last `WINDOW` seconds, while `watch` runs."""

    def __init__(self) -> None:
        self._seen: deque[tuple[float, float]] = deque()  # (monotonic time, lag)

    def worst(self) -> float:
        """Seconds: the worst lag of the last `WINDOW` seconds (0 before the first look)."""
        self._forget(time.monotonic())
        return max((lag for _, lag in self._seen), default=0.0)

    def note(self, lag: float, now: float) -> None:
        self._seen.append((now, max(lag, 0.0)))
        self._forget(now)
        metrics.LOOP_LAG.set(self.worst())

    def _forget(self, now: float) -> None:
        while self._seen and self._seen[0][0] < now - WINDOW:
            self._seen.popleft()

    async def watch(self) -> None:
        """Look every `INTERVAL` until cancelled."""
        while True:
            asked = time.monotonic() + INTERVAL
            await asyncio.sleep(INTERVAL)
            now = time.monotonic()
            self.note(now - asked, now)


LAG = LoopLag()  # this process's loop
