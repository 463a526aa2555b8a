"""Slots: which collections may take a process's free slots (`max_in_flight`), and how many.

A collection is *quick* while an attempt of it that took less than `slow` seconds ended within
the last `slow` seconds, and none of its running attempts started `slow` seconds ago or more.
Any other collection is *suspect*: new (nothing of it ended yet), slow, or hung.

- A quick collection may take every free slot: its slots come back within seconds, so a lone
  busy collection runs `capacity` attempts at once.
- Suspect collections together hold at most the pool, `capacity - reserve`; each at most
  ceil(pool / (suspect collections holding executions + 1)). The one extra share is kept for a
  suspect collection that has not come yet: slots cannot be taken back from attempts that hang.
- A collection that holds nothing may take one slot beyond that, from the reserve: a newcomer
  starts at once while hung collections hold the pool, and turns quick when its attempt ends
  within `slow` seconds.

An execution is *held* from its claim until its attempt ends (running, or waiting for a slot).
A claim gives each collection what its held executions leave (`budget`, `full`). An attempt of
a suspect collection that has one running already starts only while the suspect collections'
running attempts are fewer than the pool (`may_start`): executions claimed while a collection
was quick wait once it turns suspect, rather than take the reserve.

A reserve of 0 (`reserve_for`: a capacity under 10) turns all of this off: every collection may
take every slot.

The bookkeeping is O(1) amortised per execution: the attempts in start order and the fast ends
in end order are two queues, consumed as they age past `slow`, and the suspect collections'
totals are kept as collections change class. Deciding for one collection is O(1); `full` is
O(suspect collections holding executions) and `budget` O(those and the quick ones), once per
claim.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

UNBOUNDED = 1 << 30  # the room of a quick collection: whatever the process has free


def reserve_for(capacity: int) -> int:
    """The slots kept from suspect collections: a tenth of `capacity` (none under 10)."""
    return capacity // 10


def suspect_room(held: int, holders: int, pool_held: int, pool: int, capacity: int) -> int:
    """How many more executions a suspect collection holding `held` may be given, while
    `holders` suspect collections hold `pool_held` executions (it among them when it holds
    any): its share of the pool, as long as the pool lasts; a collection holding nothing gets
    one slot of the reserve once the pool is spent, while suspect ones hold fewer than
    `capacity`."""
    sharing = holders if held else holders + 1
    share = -(-pool // (sharing + 1))
    room = min(share - held, pool - pool_held)
    if held == 0 and room < 1 and pool_held < capacity:
        return 1
    return max(room, 0)


@dataclass(slots=True)
class _Collection:
    held: int = 0  # executions claimed whose attempt has not ended
    running: int = 0  # attempts started and not ended
    overdue: int = 0  # running attempts that started `slow` seconds ago or more
    fast_end: float = -math.inf  # when an attempt that took less than `slow` last ended
    quick: bool = False


class Run:
    """One attempt as the slots count it: from `Slots.try_start` to `Slots.end`."""

    __slots__ = ("collection", "ended", "overdue", "started")

    def __init__(self, collection: int, started: float) -> None:
        self.collection = collection
        self.started = started
        self.overdue = False
        self.ended = False


class Budget:
    """One claim's share of the slots (the store's `Shares`): what the collections held when
    the claim began, copied on the event loop (the claim may run on the store's thread), and
    what the claim takes, counted as it goes."""

    def __init__(
        self, quick: frozenset[int], held: dict[int, int], pool_held: int, pool: int, capacity: int
    ) -> None:
        self._quick = quick
        self._held = held  # suspect collections holding executions: how many
        self._pool_held = pool_held
        self._pool = pool
        self._capacity = capacity

    def _room(self, held: int) -> int:
        return suspect_room(held, len(self._held), self._pool_held, self._pool, self._capacity)

    def full(self) -> list[int]:
        """The collections that may be given nothing more: a claim passes over their work."""
        return [c for c, held in self._held.items() if self._room(held) <= 0]

    def take(self, collection_id: int) -> bool:
        """Count one execution of the collection, if it may be given one."""
        if collection_id in self._quick:
            return True
        held = self._held.get(collection_id, 0)
        if self._room(held) <= 0:
            return False
        self._held[collection_id] = held + 1
        self._pool_held += 1
        return True


class Slots:
    """The slots of one process: what each collection holds and runs, and its class."""

    def __init__(
        self,
        capacity: int,
        reserve: int,
        slow: float,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        """`timer`: seconds, never going back (tests move it)."""
        self.capacity = capacity
        self.pool = capacity - reserve
        self.slow = slow
        self._on = reserve > 0
        self._timer = timer
        self._collections: dict[int, _Collection] = {}
        self._quick: set[int] = set()
        self._suspects: set[int] = set()  # suspect collections holding executions
        self._pool_held = 0  # executions the suspect collections hold
        self._pool_running = 0  # attempts of theirs running
        self._started: deque[Run] = deque()  # attempts younger than `slow`, in start order
        self._fast_ends: deque[tuple[float, int]] = deque()  # (when, collection), in end order

    # -- bookkeeping -----------------------------------------------------------------------

    def hold(self, collection_id: int) -> None:
        """An execution of the collection was claimed."""
        if not self._on:
            return
        state = self._collections.get(collection_id)
        if state is None:
            state = self._collections[collection_id] = _Collection()
        self._leave(collection_id, state)
        state.held += 1
        self._join(collection_id, state)

    def try_start(self, collection_id: int) -> Run | None:
        """An attempt of an execution the collection holds starts, if it `may_start` now: its
        `Run`; else None (nothing changes)."""
        if not self._on:
            return Run(collection_id, 0.0)
        now = self._advance()
        state = self._collections[collection_id]
        if not self._may_start(state):
            return None
        run = Run(collection_id, now)
        self._leave(collection_id, state)
        state.running += 1
        self._join(collection_id, state)
        self._started.append(run)
        return run

    def end(self, run: Run) -> None:
        """The attempt ended: its execution is no longer held. A fast attempt (under `slow`
        seconds) makes its collection quick, unless another of its attempts is overdue."""
        if not self._on:
            return
        now = self._advance()
        collection_id = run.collection
        state = self._collections[collection_id]
        run.ended = True
        self._leave(collection_id, state)
        state.held -= 1
        state.running -= 1
        if run.overdue:
            state.overdue -= 1
        if now - run.started < self.slow:
            state.fast_end = now
            self._fast_ends.append((now, collection_id))
        state.quick = state.overdue == 0 and state.fast_end > now - self.slow
        self._join(collection_id, state)
        if not state.held and not state.quick:
            del self._collections[collection_id]

    # -- decisions -------------------------------------------------------------------------

    def quick(self, collection_id: int) -> bool:
        """Whether the collection may take every free slot."""
        if not self._on:
            return True
        self._advance()
        return collection_id in self._quick

    def share(self, collection_id: int) -> int:
        """The most the collection may hold at once now (UNBOUNDED: quick)."""
        if not self._on:
            return UNBOUNDED
        self._advance()
        if collection_id in self._quick:
            return UNBOUNDED
        sharing = len(self._suspects) + (0 if collection_id in self._suspects else 1)
        return -(-self.pool // (sharing + 1))

    def room(self, collection_id: int) -> int:
        """How many more executions a claim may give the collection now."""
        if not self._on:
            return UNBOUNDED
        self._advance()
        if collection_id in self._quick:
            return UNBOUNDED
        state = self._collections.get(collection_id)
        return self._room(state.held if state else 0)

    def may_start(self, collection_id: int) -> bool:
        """Whether an attempt of an execution the collection holds may start now (a slot being
        free): always for a quick collection, or one with nothing running; else while the
        suspect collections' running attempts are fewer than the pool. (What it holds was
        within its share when claimed: shares shrink as suspect collections come, and a held
        execution that waited would keep its slot from the others all the same.)"""
        if not self._on:
            return True
        self._advance()
        return self._may_start(self._collections[collection_id])

    def _may_start(self, state: _Collection) -> bool:
        return state.quick or not state.running or self._pool_running < self.pool

    def full(self) -> list[int]:
        """The collections a claim may give nothing now (their due work is passed over)."""
        if not self._on:
            return []
        self._advance()
        return [c for c in self._suspects if self._room(self._collections[c].held) <= 0]

    def budget(self) -> Budget | None:
        """What the next claim may give each collection (None: no bound)."""
        if not self._on:
            return None
        self._advance()
        held = {c: self._collections[c].held for c in self._suspects}
        return Budget(frozenset(self._quick), held, self._pool_held, self.pool, self.capacity)

    # -- inside ----------------------------------------------------------------------------

    def _room(self, held: int) -> int:
        holders = len(self._suspects)
        return suspect_room(held, holders, self._pool_held, self.pool, self.capacity)

    def _advance(self) -> float:
        """Bring the classes up to now: attempts that reached `slow` seconds are overdue (their
        collection is suspect until they end), and a collection whose last fast end is `slow`
        seconds old is no longer quick. Returns now."""
        now = self._timer()
        edge = now - self.slow
        started = self._started
        while started and started[0].started <= edge:
            run = started.popleft()
            if not run.ended:
                run.overdue = True
                state = self._collections[run.collection]
                self._leave(run.collection, state)
                state.overdue += 1
                state.quick = False
                self._join(run.collection, state)
        ends = self._fast_ends
        while ends and ends[0][0] <= edge:
            _, collection_id = ends.popleft()
            known = self._collections.get(collection_id)
            if known is not None and known.quick and known.fast_end <= edge:
                self._leave(collection_id, known)
                known.quick = False
                self._join(collection_id, known)
                if not known.held:
                    del self._collections[collection_id]
        return now

    def _leave(self, collection_id: int, state: _Collection) -> None:
        """Take the collection out of the totals, before its state changes (`_join` after)."""
        if not state.quick and state.held:
            self._pool_held -= state.held
            self._pool_running -= state.running
            self._suspects.discard(collection_id)

    def _join(self, collection_id: int, state: _Collection) -> None:
        if state.quick:
            self._quick.add(collection_id)
            return
        self._quick.discard(collection_id)
        if state.held:
            self._pool_held += state.held
            self._pool_running += state.running
            self._suspects.add(collection_id)
