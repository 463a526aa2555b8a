"""A periodic engine task: run one round every `interval` seconds for the life of the engine.
A round that fails is logged (`what` names it) and the next one runs as planned; a lost
database is not logged here, since the engine's other transactions report the outage once."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from horarium.store.core.outages import is_outage

log = logging.getLogger(__name__)


async def every(interval: float, what: str, round_: Callable[[], Awaitable[object]]) -> None:
    while True:
        try:
            await round_()
        except Exception as exc:
            if not is_outage(exc):
                log.exception("%s failed", what)
        await asyncio.sleep(interval)
