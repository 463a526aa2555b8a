"""How pytest-xdist hands modules to its workers in `./scripts/test` (`--dist loadfile`):
xdist's whole-file scheduling, with one change to which module a worker is given next.

xdist gives a worker its next module before the current one ends (once two or fewer of its tests
are left: a worker runs a test only when it knows the one after it). A module given to a worker
that is still in a long module waits behind it: the next slow module of the queue would wait up
to two minutes behind a one-test cluster module while other workers ran out of slow work. So a
worker whose current module is slow is given the queue's last module (the queue ends with the
quick ones, which then wait only for the slow module to end); a worker in a quick module is given
the queue's first, as xdist does.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from xdist.scheduler import LoadFileScheduling


class QuickBehindSlow(LoadFileScheduling):
    """`--dist loadfile`, where a worker still in one of the `slow` modules (file paths, as
    xdist names a module's scope) is given the queue's last module instead of its first."""

    def __init__(self, config: Any, log: Any, slow: Collection[str]) -> None:
        super().__init__(config, log)
        self._slow = frozenset(slow)

    def _assign_work_unit(self, node: Any) -> None:
        queue = self.workqueue
        last = next(reversed(queue), None)
        if last is not None and last not in self._slow and self._in_slow_module(node):
            queue.move_to_end(last, last=False)  # xdist takes the first
        super()._assign_work_unit(node)

    def _in_slow_module(self, node: Any) -> bool:
        """Whether `node` has tests of a slow module still to run."""
        work: dict[str, dict[str, bool]] = self.assigned_work.get(node, {})
        return any(scope in self._slow and not all(done.values()) for scope, done in work.items())
