"""The systemd units in deploy/systemd: `systemd-analyze verify` accepts them, their exposure
(`systemd-analyze security`) stays in systemd's "OK" band, the settings they give are options
Horarium reads, and the processes speak the `Type=notify` protocol they declare: READY=1 once
they serve, STOPPING=1 when they begin to drain, exit code 0 after SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from horarium.config import Settings
from tests import forkserver
from tests.server_process import LOOPBACK_ONLY, running_server
from tests.support import require_tool

UNITS = sorted((Path(__file__).parents[2] / "deploy" / "systemd").glob("*.service"))
INSTALLED_AT = "/opt/horarium/bin/horarium"
MAX_EXPOSURE = 20  # systemd-analyze's tenths: 2.0, the top of its "OK" band


@pytest.fixture
def units(tmp_path: Path) -> list[Path]:
    """The units with ExecStart pointing at this installation's `horarium` (verify checks that
    the program exists)."""
    program = Path(sys.executable).with_name("horarium")
    assert program.exists(), program
    copies = []
    for unit in UNITS:
        copy = tmp_path / unit.name
        copy.write_text(unit.read_text().replace(INSTALLED_AT, str(program)))
        copies.append(copy)
    return copies


def test_there_is_a_unit_for_serve_and_for_worker() -> None:
    commands = {re.search(r"^ExecStart=\S+ (\w+)", u.read_text(), re.M)[1] for u in UNITS}  # type: ignore[index]
    assert commands == {"serve", "worker"}
    for unit in UNITS:
        assert INSTALLED_AT in unit.read_text()


def test_systemd_accepts_the_units(units: list[Path]) -> None:
    analyze = require_tool("systemd-analyze", "systemd")
    for unit in units:
        checked = subprocess.run(
            [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60
        )
        assert (checked.returncode, checked.stdout + checked.stderr) == (0, ""), unit.name


def test_the_units_are_hardened(units: list[Path]) -> None:
    analyze = require_tool("systemd-analyze", "systemd")
    for unit in units:
        text = unit.read_text()
        for setting in (
            "DynamicUser=yes",
            "ProtectSystem=strict",
            "NoNewPrivileges=yes",
            "StateDirectory=",
            "LoadCredential=secret-key:",
            "Type=notify",
        ):
            assert setting in text, (unit.name, setting)
        scored = subprocess.run(
            [analyze, "security", "--offline=yes", f"--threshold={MAX_EXPOSURE}", str(unit)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert scored.returncode == 0, scored.stdout[-2000:]


def test_the_units_give_only_settings_horarium_reads() -> None:
    options = {f"HORARIUM_{name.upper()}" for name in Settings.__dataclass_fields__}
    for unit in UNITS:
        given = set(re.findall(r"^Environment=(HORARIUM_\w+)=", unit.read_text(), re.M))
        assert given and given <= options, (unit.name, given - options)


@pytest.fixture
def notify_socket() -> Iterator[tuple[socket.socket, str]]:
    """A socket such as systemd gives a Type=notify service (a short path: sun_path is small)."""
    folder = tempfile.mkdtemp(prefix="hn-", dir="/tmp")
    path = os.path.join(folder, "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        sock.settimeout(60)  # bounds a hung test only
        yield sock, path
    os.unlink(path)
    os.rmdir(folder)


def _said(sock: socket.socket) -> str:
    return sock.recv(4096).decode()


def test_serve_tells_systemd_when_it_is_ready_and_when_it_stops(
    notify_socket: tuple[socket.socket, str], tmp_path: Path
) -> None:
    sock, path = notify_socket
    with running_server(tmp_path, engine=True, env={"NOTIFY_SOCKET": path}) as server:
        assert _said(sock) == "READY=1"
        assert "Horarium listening on" in server.log()  # it was ready before saying so
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        assert _said(sock) == "STOPPING=1"
        assert server.process.wait(timeout=30) == 0


def test_a_worker_tells_systemd_when_it_is_ready_and_when_it_stops(
    notify_socket: tuple[socket.socket, str], tmp_path: Path
) -> None:
    sock, path = notify_socket
    log = tmp_path / "worker.log"
    command = [sys.executable, "-m", "horarium.cli", "worker", "--data-dir", str(tmp_path)]
    with log.open("ab") as out:
        worker = forkserver.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "NOTIFY_SOCKET": path, **LOOPBACK_ONLY},
        )
    try:
        assert _said(sock) == "READY=1"
        assert "Horarium worker running" in log.read_text()
        worker.send_signal(signal.SIGTERM)
        assert _said(sock) == "STOPPING=1"
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(15)
