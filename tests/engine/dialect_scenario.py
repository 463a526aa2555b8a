"""The engine's rows after one scenario run in a given dialect (`store.runs`): tests of a fast
form of the record statements run it both ways and compare."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.engine.deciding import Decider
from horarium.engine.dispatcher import Dispatcher
from horarium.engine.plans import Plans
from horarium.engine.recorder import Recorder
from horarium.store.runs.dialect import RunDialect
from horarium.store.runs.store import Runs
from tests.engine.engine_support import FakeClock, Store, engine_settings
from tests.engine.scripted_actions import ScriptedActions, action


async def run_scenario(db: AsyncEngine, dialect: RunDialect) -> dict[str, list[Any]]:
    """Jobs of every kind through two rounds of the engine; then every row the engine wrote."""
    store, clock, actions = Store(db), FakeClock(), ScriptedActions()
    retry = {"retryType": "Fixed", "retryInterval": "00:00:15", "retryCount": 1}
    await store.add("once", {"action": action("/once")})
    await store.add("faulting", {"action": action("/bad", retryPolicy=retry)})
    await store.add("erring", {"action": action("/bad", errorAction=action("/err"))})
    every_minute = {"frequency": "Minute", "interval": 1, "count": 2}
    await store.add("series", {"action": action("/s"), "recurrence": every_minute})
    actions.planned["/bad"] = [False]
    runs = Runs(db, "owner", dialect)
    recorder = Recorder(runs, clock)
    decider = Decider(Plans(100), timedelta(seconds=60))
    dispatcher = Dispatcher(runs, actions, engine_settings(), clock, recorder, decider)
    for _ in range(4):
        await dispatcher.drain()
        clock.advance(seconds=30)
    await runs.close()
    async with db.connect() as conn:  # the stored values themselves, in id order
        return {
            table: [
                tuple(row)
                for row in await conn.exec_driver_sql(f"SELECT * FROM {table} ORDER BY id")
            ]
            for table in ("jobs", "job_history", "job_executions")
        }
