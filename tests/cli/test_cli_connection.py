"""How the management commands reach the API: URL, token (given, or the local admin token),
names set once in the environment, https with a private CA, exit codes and one-line errors."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from horarium.cli.rest.connection import local_admin_token
from tests import forkserver
from tests.api.api_client import Api, add_history, http_job
from tests.cli.cli_runner import Cli, one_line_error, rows
from tests.server_process import ServerProcess, running_server
from tests.support import free_port


def test_a_bad_token_is_exit_1_with_the_401_message_and_what_to_pass(cli: Cli, api: Api) -> None:
    api.new_collection()
    result = cli("collections", "list", "--token", "hrm_not-a-key")
    assert result.exit_code == 1
    line = one_line_error(result)
    assert line.startswith("Error: AuthenticationFailed: Authentication failed.")
    assert line.endswith("(pass --token TOKEN or set HORARIUM_TOKEN)")


def test_no_token_at_all_says_to_pass_one(cli_server: ServerProcess) -> None:
    result = Cli({})("collections", "list", "--url", cli_server.base_url, "--subscription", "s")
    assert result.exit_code == 1
    assert "pass --token TOKEN or set HORARIUM_TOKEN" in one_line_error(result)


def test_run_elsewhere_it_names_the_admin_token_file_it_looked_for(
    cli_server: ServerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a folder without the service's horarium-data
    result = Cli({})("collections", "list", "--url", cli_server.base_url, "--subscription", "s")
    assert result.exit_code == 1
    line = one_line_error(result)
    assert f"no admin-token file at {tmp_path / 'horarium-data' / 'admin-token'}" in line
    assert "pass --data-dir DIR" in line and "--token TOKEN" in line
    # Pointed at the service's data folder, it is let in.
    data = ["--data-dir", str(cli_server.data_dir)]
    listed = Cli({})(
        "collections", "list", "--url", cli_server.base_url, "--subscription", "s", *data
    )
    assert listed.exit_code == 0, listed.output


def test_a_server_that_is_down_is_one_line_naming_its_url(cli: Cli) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = cli("jobs", "list", "--url", url, "--resource-group", "rg", "--collection", "c")
    assert result.exit_code == 1
    assert one_line_error(result) == f"Error: cannot reach {url}: Connection refused"


def test_what_the_api_refuses_is_exit_1_with_its_code_and_message(cli: Cli) -> None:
    result = cli("collections", "show", "missing", "--resource-group", "rg1")
    assert result.exit_code == 1
    assert one_line_error(result) == (
        "Error: ResourceNotFound: The Resource 'Microsoft.Scheduler/jobCollections/missing'"
        " under resource group 'rg1' was not found."
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("jobs", "list", "--resource-group", "rg1"), "name the collection"),
        (("jobs", "show", "--resource-group", "rg1", "--collection", "c"), "name the job"),
        (("jobs", "show", "..", "--resource-group", "rg1", "--collection", "c"), "'..'"),
    ],
)
def test_usage_mistakes_are_exit_2_in_one_line(cli: Cli, args: tuple[str, ...], says: str) -> None:
    result = cli(*args)
    assert result.exit_code == 2
    assert says in one_line_error(result)


def test_clicks_own_usage_errors_are_exit_2(cli: Cli, tmp_path: Path) -> None:
    assert cli("jobs", "list", "--no-such-option").exit_code == 2
    assert cli("jobs", "list", "--url", "ftp://example.com").exit_code == 2
    (tmp_path / "broken.json").write_text("{not json")
    broken = cli("jobs", "put", "broken.json", "--resource-group", "g", "--collection", "c")
    assert broken.exit_code == 2
    assert one_line_error(broken).startswith("Error: broken.json: not valid JSON")


def test_a_missing_subscription_is_a_usage_error(cli_server: ServerProcess) -> None:
    result = Cli({"HORARIUM_URL": cli_server.base_url})("collections", "list")
    assert result.exit_code == 2
    assert "--subscription S or HORARIUM_SUBSCRIPTION" in one_line_error(result)


def test_everything_set_once_in_the_environment(
    cli_server: ServerProcess, api: Api, subscription: str
) -> None:
    name = api.new_collection()
    api.put(api.job(name, "ping"), http_job())
    shell = Cli(
        {
            "HORARIUM_URL": cli_server.base_url,
            "HORARIUM_TOKEN": cli_server.token or "",
            "HORARIUM_SUBSCRIPTION": subscription,
            "HORARIUM_RESOURCE_GROUP": "rg1",
            "HORARIUM_COLLECTION": name,
        }
    )
    assert [row[0] for row in rows(shell("jobs", "list").stdout)[1:]] == ["ping"]
    assert shell("jobs", "show", "ping").exit_code == 0
    assert shell("collections", "show").exit_code == 0
    other = api.new_collection()  # an argument wins over HORARIUM_COLLECTION
    shown = shell("collections", "show", other)
    assert shown.exit_code == 0, shown.output
    assert dict(tuple(r) for r in rows(shown.stdout))["name"] == other  # type: ignore[misc]


def test_options_alone_name_everything(cli_server: ServerProcess, api: Api) -> None:
    name = api.new_collection()
    result = Cli({})(
        "collections",
        "show",
        "--url",
        cli_server.base_url,
        "--token",
        cli_server.token or "",
        "--subscription",
        api.subscription,
        "--resource-group",
        "rg1",
        "--collection",
        name,
    )
    assert result.exit_code == 0, result.output


def test_without_a_token_the_local_admin_token_is_used(
    cli_server: ServerProcess, api: Api, tmp_path: Path
) -> None:
    api.new_collection()
    local = Cli({"HORARIUM_URL": cli_server.base_url, "HORARIUM_SUBSCRIPTION": api.subscription})
    by_option = local("collections", "list", "--data-dir", str(cli_server.data_dir))
    assert by_option.exit_code == 0, by_option.output
    by_variable = local("collections", "list", HORARIUM_DATA_DIR=str(cli_server.data_dir))
    assert by_variable.exit_code == 0, by_variable.output
    # From the default folder, ./horarium-data, as an operator next to `horarium serve` has it.
    (tmp_path / "horarium-data").mkdir()
    (tmp_path / "horarium-data" / "admin-token").write_text((cli_server.token or "") + "\n")
    assert local("collections", "list").exit_code == 0


def test_a_wrong_local_admin_token_says_where_it_was_read(
    cli_server: ServerProcess, tmp_path: Path
) -> None:
    (tmp_path / "admin-token").write_text("hrm_stale\n")
    result = Cli({})(
        "collections",
        "list",
        "--url",
        cli_server.base_url,
        "--subscription",
        "s",
        "--data-dir",
        str(tmp_path),
    )
    assert result.exit_code == 1
    assert f"the token was read from {tmp_path / 'admin-token'}" in one_line_error(result)


def test_the_local_admin_token_is_only_for_a_loopback_url(tmp_path: Path) -> None:
    (tmp_path / "admin-token").write_text("hrm_x\n")
    found = tmp_path / "admin-token"
    for url in (
        "http://127.0.0.1:8080",
        "http://127.0.0.2:9",
        "http://localhost:8080",
        "https://[::1]:8443",
    ):
        assert local_admin_token(url, tmp_path) == found, url
    for url in (
        "https://scheduler.example.com",
        "http://10.0.0.5:8080",
        "http://[::2]:80",
        "http://localhost.example.com",
    ):
        assert local_admin_token(url, tmp_path) is None, url
    assert local_admin_token("http://127.0.0.1:8080", tmp_path / "elsewhere") is None


def test_lists_follow_next_link_on_the_url_given_even_behind_a_public_url(
    tmp_path: Path, subscription: str
) -> None:
    """The service names itself https://jobs.example.com/scheduler in nextLink; the commands
    stay on --url (the tests' loopback guard fails any connection elsewhere)."""
    args = ["--public-url", "https://jobs.example.com/scheduler"]
    with running_server(tmp_path / "public", args=args) as server:
        api = Api(server, subscription)
        name = api.new_collection()
        api.put(api.job(name, "j"), http_job())
        at = datetime(2024, 5, 1, tzinfo=UTC)
        add_history(
            server,
            "j",
            [
                {
                    "action_name": "MainAction",
                    "status": "Completed",
                    "start_time": at + timedelta(minutes=i),
                    "retry_count": 0,
                    "repeat_count": i,
                    "message": f"m{i}",
                }
                for i in range(1, 4)
            ],
        )
        cli = Cli({"HORARIUM_URL": server.base_url, "HORARIUM_TOKEN": server.token or ""})
        listed = cli.json(
            "jobs",
            "history",
            "j",
            "--top",
            "1",
            "--all",
            "--subscription",
            subscription,
            "--resource-group",
            "rg1",
            "--collection",
            name,
        )
    assert [e["properties"]["message"] for e in listed["value"]] == ["m3", "m2", "m1"]


def test_https_with_a_private_ca_file(tmp_path: Path, subscription: str) -> None:
    from tests.actions.tls_material import make_pki

    pki = make_pki(tmp_path)
    pem = str(tmp_path / "server.pem")
    tls = ["--ssl-certfile", pem, "--ssl-keyfile", pem]
    with running_server(tmp_path / "tls", args=tls, ca_file=pki.ca_file) as server:
        Api(server, subscription).new_collection()
        cli = Cli(
            {
                "HORARIUM_URL": server.base_url,
                "HORARIUM_TOKEN": server.token or "",
                "HORARIUM_SUBSCRIPTION": subscription,
            }
        )
        unverified = cli("collections", "list")
        by_option = cli("collections", "list", "--ca-file", str(pki.ca_file))
        by_variable = cli("collections", "list", HORARIUM_CA_FILE=str(pki.ca_file))
    assert unverified.exit_code == 1
    line = one_line_error(unverified)
    assert line.startswith(
        f"Error: cannot reach {server.base_url}: [SSL: CERTIFICATE_VERIFY_FAILED]"
    )
    assert line.endswith(
        "(a certificate from a private CA: pass --ca-file or set HORARIUM_CA_FILE)"
    )
    assert by_option.exit_code == 0, by_option.output
    assert by_variable.exit_code == 0, by_variable.output
    assert len(rows(by_option.stdout)) == 2


def test_an_unreadable_ca_file_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    result = cli("collections", "list", "--ca-file", str(tmp_path / "missing.pem"))
    assert result.exit_code == 2
    assert one_line_error(result).startswith("Error: --ca-file: cannot use the CA file")


def test_the_command_runs_as_a_process_with_its_exit_codes(
    cli_server: ServerProcess, api: Api, tmp_path: Path
) -> None:
    name = api.new_collection()
    env = {
        **os.environ,
        "HORARIUM_URL": cli_server.base_url,
        "HORARIUM_TOKEN": cli_server.token or "",
        "HORARIUM_SUBSCRIPTION": api.subscription,
        "HORARIUM_RESOURCE_GROUP": "rg1",
    }
    command = [sys.executable, "-m", "horarium.cli", "collections"]
    shown = forkserver.run(
        [*command, "show", name], env=env, capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert f"name            {name}" in shown.stdout
    missing = forkserver.run(
        [*command, "show", "nope"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert missing.returncode == 1
    assert missing.stderr.startswith("Error: ResourceNotFound: ")
    assert missing.stderr.count("\n") == 1 and "Traceback" not in missing.stderr
