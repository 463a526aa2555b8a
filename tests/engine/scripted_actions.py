"""An action runner for engine tests that need no network: outcomes planned per `uri`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from horarium.actions.base import ActionResult, ExecutionContext


class ScriptedActions:
    """An action runner answering by the action's `uri`: the outcomes planned for it in turn
    (the last repeats; success when none); `hook` runs at the start of every action. An action
    waits for its uri's gate in `gates`, else for `gate` (None: it answers at once)."""

    def __init__(self) -> None:
        self.planned: dict[str, list[bool]] = {}
        self.calls: list[str] = []
        self.running = 0
        self.most_running = 0
        self.started = asyncio.Event()  # set whenever an action starts
        self.gate: asyncio.Event | None = None
        self.gates: dict[str, asyncio.Event] = {}
        self.hook: Callable[[str], None] = lambda uri: None

    async def run(self, action: Mapping[str, Any], context: ExecutionContext) -> ActionResult:
        uri = action["request"]["uri"]
        self.calls.append(uri)
        self.hook(uri)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        self.started.set()
        try:
            gate = self.gates.get(uri, self.gate)
            if gate is not None:
                await gate.wait()
            await asyncio.sleep(0)
        finally:
            self.running -= 1
        outcomes = self.planned.get(uri) or [True]
        succeeded = outcomes.pop(0) if len(outcomes) > 1 else outcomes[0]
        return ActionResult(succeeded, "ok" if succeeded else "failed")


def action(uri: str, **more: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "POST"}, **more}
