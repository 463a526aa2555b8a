"""deploy/prometheus and deploy/grafana: the alerting rules are valid (`promtool check rules`,
Debian's prometheus package) and fire as their unit tests say (`promtool test rules`); every
PromQL expression of the Grafana dashboard parses; and every Horarium series they name is one a
running `horarium serve` exports on /metrics."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.ops.ops_support import samples
from tests.server_process import ServerProcess, running_server
from tests.support import require_tool

DEPLOY = Path(__file__).parents[2] / "deploy"
RULES = DEPLOY / "prometheus" / "horarium-alerts.yml"
RULE_TESTS = DEPLOY / "prometheus" / "horarium-alerts.test.yml"
DASHBOARD = DEPLOY / "grafana" / "horarium-dashboard.json"
SERIES = re.compile(r"\bhorarium_[a-z_]+\b")


def _rule_expressions() -> list[str]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule["expr"] for group in groups for rule in group["rules"]]


def _dashboard_expressions() -> list[str]:
    panels: list[dict[str, Any]] = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel["targets"]]


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    promtool = require_tool("promtool", "prometheus")
    return subprocess.run([promtool, *args], capture_output=True, text=True, timeout=120)


def test_the_alerting_rules_are_valid() -> None:
    checked = _promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 9 rules found" in checked.stdout


def test_the_alerts_fire_when_work_waits_a_node_goes_or_executions_fault() -> None:
    tested = _promtool("test", "rules", str(RULE_TESTS))
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_dashboard_expression_parses(tmp_path: Path) -> None:
    # Grafana's $__rate_interval is not PromQL: promtool sees a fixed range in its place.
    rules = [
        {"record": f"horarium:dashboard_{i}", "expr": e.replace("$__rate_interval", "5m")}
        for i, e in enumerate(_dashboard_expressions())
    ]
    path = tmp_path / "dashboard-as-rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = _promtool("check", "rules", str(path))
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The series names a serve process with its scheduler exports."""
    server: ServerProcess
    with running_server(tmp_path_factory.mktemp("metrics"), engine=True) as server:
        answer = httpx.get(server.url("/metrics"), headers=server.auth_headers(), timeout=15)
        assert answer.status_code == 200, answer.text
        return {sample.name for sample in samples(answer.text)}


def test_every_series_the_rules_and_the_dashboard_name_is_exported(exported: set[str]) -> None:
    named = {
        name
        for expression in _rule_expressions() + _dashboard_expressions()
        for name in SERIES.findall(expression)
    }
    assert len(named) >= 15
    assert sorted(named - exported) == []
