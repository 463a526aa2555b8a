"""`Slots` on its own, with a timer the test moves: which collections are quick, the pool and
its shares, the reserve and a newcomer's slot (docs/engine.md, "Fairness between collections")."""

from __future__ import annotations

from horarium.engine.slots import UNBOUNDED, Run, Slots, reserve_for

SLOW = 2.0


class Timer:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def slots(capacity: int = 100) -> tuple[Slots, Timer]:
    timer = Timer()
    return Slots(capacity, reserve_for(capacity), SLOW, timer), timer


def run(s: Slots, collection: int, n: int = 1) -> list[Run]:
    """`n` executions of the collection claimed and started."""
    started = []
    for _ in range(n):
        s.hold(collection)
        attempt = s.try_start(collection)
        assert attempt is not None
        started.append(attempt)
    return started


def test_the_reserve_is_a_tenth_and_none_under_ten_slots() -> None:
    assert [reserve_for(c) for c in (1, 9, 10, 100, 500)] == [0, 0, 1, 10, 50]


def test_a_new_collection_is_suspect_and_may_take_half_the_pool() -> None:
    s, _ = slots()  # pool: 90
    assert not s.quick(1)
    assert s.room(1) == 45  # one share more than the holders: a later one still finds room
    run(s, 1, 45)
    assert s.room(1) == 0
    assert s.full() == [1]


def test_a_fast_end_makes_a_collection_quick_and_it_may_take_every_slot() -> None:
    s, timer = slots()
    first = run(s, 1, 45)
    timer.now += 0.1
    s.end(first[0])
    assert s.quick(1)
    assert s.room(1) == UNBOUNDED
    assert s.full() == []
    run(s, 1, 55)  # all 100 slots
    assert all(s.may_start(1) for _ in range(3))
    budget = s.budget()
    assert budget is not None and all(budget.take(1) for _ in range(500))


def test_a_slow_end_does_not_make_a_collection_quick() -> None:
    s, timer = slots()
    [attempt] = run(s, 1)
    timer.now += SLOW
    s.end(attempt)
    assert not s.quick(1)
    assert s.room(1) == 45


def test_a_quick_collection_turns_suspect_when_an_attempt_runs_too_long() -> None:
    s, timer = slots()
    fast, slow = run(s, 1, 2)
    s.end(fast)
    assert s.quick(1)
    run(s, 1, 58)  # 59 held: beyond a suspect's share
    timer.now += SLOW - 0.5
    assert s.quick(1)
    timer.now += 0.5  # every running attempt is now overdue
    assert not s.quick(1)
    assert s.room(1) == 0 and s.full() == [1]  # it is given nothing more
    s.end(slow)
    assert not s.quick(1)  # a slow end, and other attempts still overdue


def test_a_collection_turned_suspect_starts_what_it_holds_only_within_the_pool() -> None:
    s, timer = slots()  # pool 90
    [fast] = run(s, 1)
    s.end(fast)
    run(s, 1, 85)
    for _ in range(10):
        s.hold(1)  # claimed while quick: 95 held
    timer.now += SLOW
    assert not s.quick(1)
    for _ in range(5):
        assert s.may_start(1)
        assert s.try_start(1) is not None
    assert not s.may_start(1)  # 90 running: the rest would take the reserve


def test_a_quick_collection_turns_suspect_when_nothing_ended_fast_for_a_while() -> None:
    s, timer = slots()
    [attempt] = run(s, 1)
    timer.now += 0.5
    s.end(attempt)
    assert s.quick(1)
    timer.now += SLOW - 0.5
    assert s.quick(1)
    timer.now += 0.5  # its last fast end is `SLOW` old
    assert not s.quick(1)
    assert s.room(1) == 45  # holding nothing: a new collection again


def test_an_overdue_attempt_ending_makes_its_collection_quick_again_after_a_fast_end() -> None:
    s, timer = slots()
    [slow] = run(s, 1)
    timer.now += SLOW + 1
    [fast] = run(s, 1)
    timer.now += 0.1
    s.end(fast)
    assert not s.quick(1)  # `slow` is still running
    s.end(slow)
    assert s.quick(1)  # the fast end is recent, nothing runs too long


def test_suspect_collections_share_the_pool_and_leave_a_share_for_one_more() -> None:
    s, _ = slots()  # pool 90
    run(s, 1, 45)
    assert s.room(2) == 30  # two holders then: a third of the pool each
    run(s, 2, 30)
    assert s.room(3) == 15  # its share is 23, the pool has 15 left
    run(s, 3, 15)
    assert sorted(s.full()) == [1, 2, 3]


def test_a_collection_holding_nothing_gets_one_slot_of_the_reserve_when_the_pool_is_spent() -> None:
    s, _ = slots()  # pool 90, reserve 10
    run(s, 1, 45)
    run(s, 2, 30)
    run(s, 3, 15)
    for newcomer in range(4, 14):  # ten newcomers: the reserve
        assert s.room(newcomer) == 1
        run(s, newcomer)
        assert s.room(newcomer) == 0
    assert s.room(14) == 0  # every slot is held by suspect collections
    budget = s.budget()
    assert budget is not None and not budget.take(14)


def test_a_newcomer_may_start_its_attempt_while_hung_collections_hold_the_pool() -> None:
    s, timer = slots()
    run(s, 1, 45)
    run(s, 2, 45)
    timer.now += SLOW * 5  # all hung
    s.hold(3)
    assert s.may_start(3)
    attempt = s.try_start(3)
    assert attempt is not None
    timer.now += 0.05
    s.end(attempt)
    assert s.quick(3)
    assert s.room(3) == UNBOUNDED
    assert not s.may_start(1) and not s.may_start(2)


def test_a_claims_budget_counts_what_it_takes_newcomers_included() -> None:
    s, timer = slots()
    [fast] = run(s, 9)
    timer.now += 0.01
    s.end(fast)  # 9 is quick
    budget = s.budget()
    assert budget is not None
    assert sum(budget.take(1) for _ in range(100)) == 45  # alone: half the pool
    assert sum(budget.take(2) for _ in range(100)) == 30  # then a third
    assert sum(budget.take(3) for _ in range(100)) == 15  # then what the pool has left
    assert sum(budget.take(4) for _ in range(100)) == 1  # then a slot of the reserve
    assert sorted(budget.full()) == [1, 2, 3, 4]
    assert all(budget.take(9) for _ in range(100))  # quick: no bound
    # The budget is a copy: the slots themselves changed nothing.
    assert s.room(1) == 45 and s.full() == []


def test_a_suspect_collection_starts_what_it_holds_while_the_pool_has_room() -> None:
    s, _ = slots(20)  # pool 18, reserve 2
    run(s, 1, 9)
    for _ in range(6):
        s.hold(2)  # claimed: within its share, then
    run(s, 3, 3)  # a third collection: 2's share shrinks to 5
    assert s.share(2) == 5
    for _ in range(6):
        assert s.may_start(2)
        assert s.try_start(2) is not None
    s.hold(3)
    assert not s.may_start(3)  # the pool is spent: 18 running
    s.hold(4)
    assert s.may_start(4)  # nothing of 4 runs: the reserve's slot


def test_a_collection_that_holds_nothing_and_is_not_quick_is_forgotten() -> None:
    s, timer = slots()
    [attempt] = run(s, 1)
    timer.now += SLOW
    s.end(attempt)  # slow: not quick, holds nothing
    assert s._collections == {}
    [attempt] = run(s, 2)
    s.end(attempt)  # quick: remembered while it is
    assert list(s._collections) == [2]
    timer.now += SLOW
    s.room(2)
    assert s._collections == {} and not s._quick and not s._suspects


def test_under_ten_slots_every_collection_may_take_every_slot() -> None:
    s, timer = slots(9)
    started = run(s, 1, 9)
    timer.now += SLOW * 10
    assert s.quick(1) and s.may_start(1) and s.room(1) == UNBOUNDED
    assert s.budget() is None and s.full() == []
    for attempt in started:
        s.end(attempt)
