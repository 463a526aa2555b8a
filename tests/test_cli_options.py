"""`horarium serve` / `worker` options come from `Settings`: each field is an option and reads
HORARIUM_<OPTION>; `worker` leaves out the API's options."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from horarium import cli
from horarium.config import Settings


def _parsed(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str]) -> Settings:
    seen: list[Settings] = []
    monkeypatch.setattr("horarium.process.serve.serve", seen.append)
    result = CliRunner().invoke(cli.main, ["serve", *args], env=env)
    assert result.exit_code == 0, result.output
    return seen[0]


def test_every_setting_is_an_option_of_serve_with_its_environment_variable() -> None:
    text = CliRunner().invoke(cli.main, ["serve", "--help"], terminal_width=200).output
    for settings_field in dataclasses.fields(Settings):
        flag = settings_field.metadata.get("flag") or "--" + settings_field.name.replace("_", "-")
        assert flag.split("/")[0] in text, settings_field.name


def test_options_and_environment_variables_set_the_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = {"HORARIUM_ENGINE": "false", "HORARIUM_LOOP": "asyncio", "HORARIUM_BATCH_SIZE": "7"}
    settings = _parsed(monkeypatch, ["--port", "9123", "--http-timeout", "2.5"], env)
    assert (settings.port, settings.http_timeout) == (9123, 2.5)
    assert (settings.run_engine, settings.loop, settings.batch_size) == (False, "asyncio", 7)


def test_defaults_are_the_settings_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _parsed(monkeypatch, [], {}) == Settings()


def test_an_option_outside_its_choices_is_a_one_line_usage_error() -> None:
    result = CliRunner().invoke(cli.main, ["serve", "--loop", "trio"])
    assert result.exit_code == 2
    assert "--loop" in result.output


def test_worker_takes_no_api_options() -> None:
    text = CliRunner().invoke(cli.main, ["worker", "--help"]).output
    assert "--host" not in text and "--port" not in text and "--engine" not in text
    assert "--lease-seconds" in text
