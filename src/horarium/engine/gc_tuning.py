"""Garbage-collector settings for a process that runs the engine.

The engine allocates a few hundred short-lived objects per execution (tasks, futures, rows,
requests, responses). With the interpreter's defaults — a young-generation collection every 700
net allocations, and full collections that walk every object the imported libraries created —
collection took about a fifth of the process's CPU in the dispatch benchmark. What exists once
the process is up (modules, the app, settings) is never garbage: freezing it takes it out of
every later collection, and a larger young-generation threshold makes collections rarer.
Reference cycles are still collected.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000  # net allocations between young-generation collections (default 700)

_done = False


def tune_gc() -> None:
    """Freeze the objects alive now and raise the young threshold (once per process)."""
    global _done
    if _done:
        return
    _done = True
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    if young:  # 0: collection switched off by the user; leave it so
        gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
