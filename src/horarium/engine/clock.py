"""Where the engine reads the time: injectable, so unit tests can step through a schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, aware UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class DatabaseClock:
    """The database's time as this process reads it: `base` (the host's clock) plus the offset
    the node's heartbeat last measured (`engine.nodes`), so that every node of a cluster
    decides what is due, and when a node's beat is too old, by one clock. The offset stays 0
    where it is not measured (SQLite: one host, one clock)."""

    def __init__(self, base: Clock | None = None) -> None:
        self.base: Clock = base or SystemClock()
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return self.base.now() + self.offset
