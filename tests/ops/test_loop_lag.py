"""The event-loop lag gauge: how long the loop was held by something else, the worst of a
window. It is what an operator looks at when requests slow down for no visible reason."""

from __future__ import annotations

import asyncio
import time

from horarium.observe import loop_lag, metrics
from horarium.observe.loop_lag import LoopLag


async def test_a_blocked_loop_shows_in_the_gauge() -> None:
    lag = LoopLag()
    watching = asyncio.create_task(lag.watch())
    try:
        await asyncio.sleep(loop_lag.INTERVAL / 2)  # the watcher's timer is set
        time.sleep(0.4)  # noqa: ASYNC251 - holding the loop is the point
        await asyncio.sleep(loop_lag.INTERVAL)  # the timer fires, late
    finally:
        watching.cancel()
    assert lag.worst() >= 0.4 - loop_lag.INTERVAL
    assert metrics.LOOP_LAG._value.get() == lag.worst()


def test_the_worst_lag_is_forgotten_after_the_window() -> None:
    lag = LoopLag()
    now = time.monotonic()
    lag.note(0.5, now - loop_lag.WINDOW - 1)  # long ago
    lag.note(0.002, now)
    assert lag.worst() == 0.002
