"""`--loop` / HORARIUM_LOOP: which event loop `horarium serve` and `horarium worker` run on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import uvloop

from horarium.loops import loop_factory, running_loop_name
from tests.server_process import running_server


def test_auto_and_uvloop_take_uvloop_when_installed_asyncio_takes_the_default() -> None:
    assert loop_factory("auto") is uvloop.new_event_loop
    assert loop_factory("uvloop") is uvloop.new_event_loop
    assert loop_factory("asyncio") is None


def test_an_unknown_loop_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="'trio' is not one of auto, asyncio, uvloop"):
        loop_factory("trio")


@pytest.mark.parametrize(("name", "expected"), [("auto", "uvloop"), ("asyncio", "asyncio")])
def test_the_running_loop_is_named(name: str, expected: str) -> None:
    async def which() -> str:
        return running_loop_name()

    with asyncio.Runner(loop_factory=loop_factory(name)) as runner:
        assert runner.run(which()) == expected


@pytest.mark.parametrize(
    ("env", "shown"),
    [({}, "event loop uvloop"), ({"HORARIUM_LOOP": "asyncio"}, "event loop asyncio")],
)
def test_serve_says_which_loop_it_runs_on(env: dict[str, str], shown: str, tmp_path: Path) -> None:
    with running_server(tmp_path, engine=True, env=env) as server:
        started = server.log_path.read_text()
    assert shown in started
