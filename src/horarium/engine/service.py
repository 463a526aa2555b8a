"""Hooks the service uses to run the scheduler. Placeholder until the execution engine lands."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.config import Settings


async def start_engine(db: AsyncEngine, settings: Settings) -> Callable[[], Awaitable[None]]:
    """Start the scheduler inside the running event loop; returns an async stop function."""

    async def stop() -> None:
        return None

    return stop


def run_worker(settings: Settings) -> None:
    """`horarium worker`: the scheduler alone, no API."""
    raise SystemExit("horarium worker: the execution engine is not built yet")
