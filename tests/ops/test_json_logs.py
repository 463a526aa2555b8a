"""`--log-format json`: every line a `horarium serve` writes is one JSON object with ts, level,
logger and event; an execution that fails logs one event with its fields, a success logs nothing
at INFO (only at `--log-level debug`), every API write one audit event — and no token."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ops.ops_support import Jobs, http_target, json_lines
from tests.server_process import ServerProcess, running_server
from tests.support import wait_until

FIELDS = {"job", "collection", "execution_tag", "attempt", "outcome", "lag", "duration"}


def _run_one_success_and_one_failure(server: ServerProcess, target_url: str) -> Jobs:
    jobs = Jobs(server)
    jobs.put("ok-job", f"{target_url}/ok")
    jobs.put("failing-job", f"{target_url}/fail")
    for name in ("ok-job", "failing-job"):
        wait_until(lambda name=name: jobs.history(name), f"the history of {name}")
    return jobs


def _events(server: ServerProcess, name: str) -> list[dict[str, Any]]:
    return [e for e in json_lines(server.log()) if e["event"] == name]


@pytest.fixture(scope="module")
def json_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Jobs]]:
    workdir: Path = tmp_path_factory.mktemp("json-logs")
    with (
        http_target() as target,
        running_server(workdir, engine=True, args=["--log-format", "json"]) as server,
    ):
        jobs = _run_one_success_and_one_failure(server, target.url)
        wait_until(lambda: _events(server, "execution.faulted"), "the failure's event")
        yield server, jobs


def test_every_line_is_one_json_object_with_ts_level_logger_and_event(
    json_server: tuple[ServerProcess, Jobs],
) -> None:
    server, _ = json_server
    lines = json_lines(server.log())
    assert lines
    for line in lines:
        assert {"ts", "level", "logger", "event"} <= set(line), line
        assert line["ts"].endswith("Z") and line["level"] in {"debug", "info", "warning", "error"}
    listening = [e for e in lines if e["event"] == "server.listening"]
    assert len(listening) == 1 and listening[0]["url"] == server.base_url
    assert listening[0]["dashboard"] == f"{server.base_url}/ui/"
    assert listening[0]["admin_token"] == str((server.data_dir / "admin-token").resolve())


def test_a_failing_execution_logs_one_event_with_its_fields(
    json_server: tuple[ServerProcess, Jobs],
) -> None:
    server, jobs = json_server
    [failed] = [e for e in _events(server, "execution.faulted") if e["job"] == "failing-job"]
    assert FIELDS <= set(failed)
    assert failed["level"] == "error" and failed["logger"] == "horarium.executions"
    assert failed["collection"] == jobs.collection_name
    assert failed["subscription"] == jobs.subscription
    assert failed["outcome"] == "failed" and failed["attempt"] == 0
    assert failed["action"] == "MainAction" and failed["action_type"] == "Http"
    assert len(failed["execution_tag"]) == 32
    assert failed["duration"] >= 0 and isinstance(failed["lag"], float)
    assert "InternalServerError" in failed["message"]


def test_a_success_logs_nothing_at_info(json_server: tuple[ServerProcess, Jobs]) -> None:
    server, _ = json_server
    about_ok = [e for e in json_lines(server.log()) if e.get("job") == "ok-job"]
    assert about_ok == []


def test_every_api_write_is_one_structured_audit_event_without_the_token(
    json_server: tuple[ServerProcess, Jobs],
) -> None:
    server, jobs = json_server
    audit = [e for e in _events(server, "api.write") if jobs.subscription in e["path"]]
    assert [(e["method"], e["status"], e["principal"]) for e in audit] == [
        ("PUT", 201, "admin"),
        ("PUT", 201, "admin"),
        ("PUT", 201, "admin"),
    ]
    assert all(e["logger"] == "horarium.audit" for e in audit)
    assert server.token is not None and server.token not in server.log()


def test_debug_level_logs_successes_too(tmp_path: Path) -> None:
    with (
        http_target() as target,
        running_server(
            tmp_path, engine=True, args=["--log-format", "json", "--log-level", "debug"]
        ) as server,
    ):
        _run_one_success_and_one_failure(server, target.url)
        succeeded = wait_until(
            lambda: _events(server, "execution.succeeded"), "the success's event"
        )
    assert [e["job"] for e in succeeded] == ["ok-job"]
    assert succeeded[0]["level"] == "debug" and succeeded[0]["outcome"] == "succeeded"


def test_text_logs_carry_the_same_event_and_fields_on_one_line(tmp_path: Path) -> None:
    with http_target() as target, running_server(tmp_path, engine=True) as server:
        _run_one_success_and_one_failure(server, target.url)
        line = wait_until(
            lambda: [x for x in server.log().splitlines() if "execution.faulted" in x],
            "the failure's line",
        )
    [text] = line
    assert " ERROR horarium.executions execution.faulted {" in text
    assert '"job": "failing-job"' in text and '"outcome": "failed"' in text
