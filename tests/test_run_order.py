"""The order the run takes its slow modules in (tests/conftest.py `run_order`): the long modules
that mostly wait start beside the busy ones, each kind slowest first, every module once; and
which module a worker is given next (tests/scheduling.py)."""

from typing import Any

from tests.conftest import BUSY_MODULES, MODULE_SECONDS, RANK, run_order
from tests.scheduling import QuickBehindSlow


def test_waiting_and_busy_modules_take_turns_slowest_first() -> None:
    seconds = {"wait-a": 100.0, "wait-b": 90.0, "wait-c": 80.0, "busy-a": 50.0, "busy-b": 60.0}
    order = run_order(seconds, frozenset({"busy-a", "busy-b"}))
    assert order == ["wait-a", "busy-b", "wait-b", "busy-a", "wait-c"]


def test_the_suites_order_starts_busy_modules_among_the_first_six() -> None:
    order = run_order(MODULE_SECONDS, BUSY_MODULES)
    assert sorted(order) == sorted(MODULE_SECONDS)
    assert set(RANK) == set(MODULE_SECONDS)
    first = order[:6]  # what six workers start with
    assert 2 <= sum(m in BUSY_MODULES for m in first) <= 4
    assert BUSY_MODULES <= set(MODULE_SECONDS)  # no busy module misspelt or gone


class Worker:
    """What xdist's scheduler needs of a worker: the tests it is sent, by index."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.extend(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


class Config:
    """The options xdist's scheduler reads: two workers, `--no-loadscope-reorder`."""

    option = type("Option", (), {"loadscopereorder": False})()

    def getvalue(self, name: str) -> Any:
        return {"tx": ["2*popen"], "dist": "loadfile", "loadscopereorder": False}[name]


def _modules_sent(worker: Worker, collection: list[str]) -> list[str]:
    seen: list[str] = []
    for index in worker.sent:
        module = collection[index].split("::")[0]
        if module not in seen:
            seen.append(module)
    return seen


def test_a_worker_still_in_a_slow_module_is_given_a_quick_one() -> None:
    # Run order: two slow one-test modules, two slow modules of three tests, three quick ones.
    collection = [
        "long_a.py::t",
        "long_b.py::t",
        *(f"slow_c.py::t{i}" for i in range(3)),
        *(f"slow_d.py::t{i}" for i in range(3)),
        *(f"quick_{name}.py::t" for name in "efg"),
    ]
    slow = ["long_a.py", "long_b.py", "slow_c.py", "slow_d.py"]
    scheduler = QuickBehindSlow(Config(), None, slow)
    one, two = Worker("gw0"), Worker("gw1")
    for worker in (one, two):
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    # xdist tops each worker up to two modules at once: behind a slow module, a quick one.
    assert _modules_sent(one, collection) == ["long_a.py", "quick_g.py"]
    assert _modules_sent(two, collection) == ["long_b.py", "quick_f.py"]
    # Once its slow module is done, a worker in a quick one gets the next slow module.
    scheduler.mark_test_complete(one, collection.index("long_a.py::t"))
    scheduler.mark_test_complete(one, collection.index("quick_g.py::t"))
    assert _modules_sent(one, collection) == ["long_a.py", "quick_g.py", "slow_c.py"]
