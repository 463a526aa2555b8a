"""The event loop the service runs on: uvloop when it is installed (`auto`), or asyncio's own.

uvloop runs the same asyncio code with its transports, timers and callbacks written in C. Most
of the engine's work per execution is event-loop and socket work (the outbound request, the
database thread's replies), so `auto` takes it: in the dispatch benchmark it cut the CPU per
execution by about a tenth (docs/benchmarks.md, "Dispatch")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

LOOPS = ("auto", "asyncio", "uvloop")


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """A factory for `asyncio.Runner` (None: asyncio's default loop)."""
    if name not in LOOPS:
        raise ValueError(f"loop: {name!r} is not one of {', '.join(LOOPS)}")
    if name == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if name == "uvloop":
            raise RuntimeError("loop: uvloop is not installed (pip install uvloop)") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def running_loop_name() -> str:
    """`uvloop` or `asyncio`: what the running loop is, for the start-up message."""
    loop = asyncio.get_running_loop()
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"
