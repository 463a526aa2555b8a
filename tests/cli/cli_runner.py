"""Running `horarium …` in process (click's CliRunner) with a set of environment variables."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from click.testing import CliRunner, Result

from horarium.cli import main


class Cli:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)

    def __call__(self, *args: str, input: str | None = None, **env: str) -> Result:
        """`horarium ARGS` with this CLI's variables (and `env`, e.g. HORARIUM_COLLECTION)."""
        runner = CliRunner()
        return runner.invoke(main, list(args), input=input, env={**self.env, **env})

    def json(self, *args: str, **env: str) -> Any:
        result = self(*args, "--json", **env)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)


def rows(stdout: str) -> list[list[str]]:
    """A printed table's lines split into cells (cells are two or more spaces apart)."""
    return [re.split(r"\s{2,}", line.strip()) for line in stdout.splitlines() if line.strip()]


def one_line_error(result: Result) -> str:
    """The single stderr line of a failed command (asserts there is exactly one)."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: "), lines
    return lines[0]
