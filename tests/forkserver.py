"""`horarium …` processes for tests, forked from a process that has imported Horarium already.

A `horarium` process spends about a second of CPU importing FastAPI, SQLAlchemy and its own
routes before it does anything; the suite starts hundreds of them. `Popen` and `run` take the
same arguments as `subprocess.Popen` and `subprocess.run` (the subset the tests use) and, for a
command `[sys.executable, "-m", "horarium.cli", …]`, ask this test process's fork server
(`tests.forkserver_main`, started on first use) for the process instead: a real process with its
own pid, environment, folder and standard streams, running the same `main()` from freshly
imported modules, that ends and is signalled as any other. Any other command, or one whose
environment changes how Python starts (a `PYTHON…` variable), goes to `subprocess` unchanged, as
does everything when HORARIUM_TEST_FORKSERVER=0.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from tests.forkserver_main import HEADER

PREFIX = [sys.executable, "-m", "horarium.cli"]
START_SECONDS = 60.0
ENABLED = os.environ.get("HORARIUM_TEST_FORKSERVER", "1") != "0"
# How Python itself starts: a command asking for other values than the fork server's needs a
# new interpreter. (Output is unbuffered in every forked process.)
_UNBUFFERED = "PYTHONUNBUFFERED"


def _python_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON") and k != _UNBUFFERED}


class _Server:
    """This test process's fork server: started on first use, gone with this process."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="horarium-forkserver-"))
        self.path = str(self.folder / "socket")
        self.settings = _python_settings(os.environ)
        log = (self.folder / "server.log").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.forkserver_main", self.path],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, _UNBUFFERED: "1"},
            cwd=Path(__file__).resolve().parent.parent,
        )
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while not os.path.exists(self.path):
            if self.process.poll() is not None or time.monotonic() > deadline:
                log_text = (self.folder / "server.log").read_text(errors="replace")
                raise RuntimeError(f"the test fork server did not start:\n{log_text}")
            time.sleep(0.02)

    def close(self) -> None:
        """Ask the server to end (it leaves running children alone) and reap it."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def serves(self, command: Sequence[str], env: Mapping[str, str]) -> bool:
        return list(command[: len(PREFIX)]) == PREFIX and _python_settings(env) == self.settings

    def fork(self, argv: list[str], fds: list[int], env: Mapping[str, str], cwd: str) -> _Exit:
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(self.path)
        payload = json.dumps({"argv": argv, "env": dict(env), "cwd": cwd}).encode()
        socket.send_fds(connection, [HEADER.pack(len(payload))], fds)
        connection.sendall(payload)
        return _Exit(connection)


_server: _Server | None = None
_server_lock = threading.Lock()


def _the_server() -> _Server:
    global _server
    with _server_lock:
        if _server is None:
            _server = _Server()
            atexit.register(_server.close)
        return _server


class _Exit:
    """The fork server's answers about one child: its pid, then its exit code."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection
        self.buffer = b""
        pid = self._line(None)
        if pid is None:
            raise RuntimeError("the test fork server did not start the command")
        self.pid = pid

    def _line(self, timeout: float | None) -> int | None:
        """The next number the server sends, or None when none came within `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.connection], [], [], left)[0]:
                return None
            chunk = self.connection.recv(64)
            if not chunk:
                raise RuntimeError("the test fork server ended before its child")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return int(line)

    def code(self, timeout: float | None) -> int | None:
        code = self._line(timeout)
        if code is not None:
            self.connection.close()
        return code


def _stream(
    spec: Any, own: int, *, readable: bool, text: bool, opened: list[int]
) -> tuple[int, IO[Any] | None]:
    """The child's descriptor for one standard stream and, for PIPE, the test's end of it."""
    if spec is None:
        return own, None
    if spec == subprocess.DEVNULL:
        fd = os.open(os.devnull, os.O_RDWR)
        opened.append(fd)
        return fd, None
    if spec == subprocess.PIPE:
        read, write = os.pipe()
        child, mine = (read, write) if readable else (write, read)
        opened.append(child)
        end: IO[Any] = os.fdopen(mine, "wb" if readable else "rb")
        if text:
            end = io.TextIOWrapper(end, write_through=True)  # type: ignore[arg-type]
        return child, end
    return (spec if isinstance(spec, int) else spec.fileno()), None


class Process:
    """A forked `horarium` process, used as a `subprocess.Popen` is."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        text: bool = False,
    ) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        opened: list[int] = []
        try:
            child_in, self.stdin = _stream(stdin, 0, readable=True, text=text, opened=opened)
            child_out, self.stdout = _stream(stdout, 1, readable=False, text=text, opened=opened)
            if stderr == subprocess.STDOUT:
                child_err, self.stderr = child_out, None
            else:
                child_err, self.stderr = _stream(
                    stderr, 2, readable=False, text=text, opened=opened
                )
            self._exit = _the_server().fork(
                self.args[len(PREFIX) :],
                [child_in, child_out, child_err],
                os.environ if env is None else env,
                os.fspath(cwd) if cwd is not None else os.getcwd(),
            )
        finally:
            for fd in opened:
                os.close(fd)
        self.pid = self._exit.pid

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._exit.code(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._exit.code(timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Send `input`, read standard output and error to their ends, wait for the exit."""
        found: dict[str, Any] = {}

        def read(name: str, stream: IO[Any]) -> None:
            found[name] = stream.read()
            stream.close()

        readers = [
            threading.Thread(target=read, args=(name, stream), daemon=True)
            for name, stream in (("out", self.stdout), ("err", self.stderr))
            if stream is not None
        ]
        for reader in readers:
            reader.start()
        if self.stdin is not None:
            try:
                if input:
                    self.stdin.write(input)
                self.stdin.close()
            except BrokenPipeError:
                pass
        deadline = None if timeout is None else time.monotonic() + timeout
        for reader in readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return found.get("out"), found.get("err")

    def __enter__(self) -> Process:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


AnyProcess = Process | subprocess.Popen[Any]


def Popen(args: Sequence[str], **options: Any) -> AnyProcess:
    """`subprocess.Popen(args, **options)`, forked from the fork server when it can be."""
    env = options.get("env")
    if ENABLED and _the_server().serves(args, os.environ if env is None else env):
        return Process(args, **options)
    return subprocess.Popen(args, **options)


def run(
    args: Sequence[str],
    *,
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **options: Any,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(args, …)`, forked from the fork server when it can be."""
    if capture_output:
        options["stdout"] = options["stderr"] = subprocess.PIPE
    if input is not None:
        options["stdin"] = subprocess.PIPE
    with Popen(args, **options) as process:
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    code = process.returncode
    assert code is not None
    if check and code:
        raise subprocess.CalledProcessError(code, list(args), out, err)
    return subprocess.CompletedProcess(list(args), code, out, err)
