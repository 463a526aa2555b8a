"""The fork server of `tests.forkserver`: `python -m tests.forkserver_main SOCKET`.

Imports every module of Horarium (and so its dependencies) once, then listens on the Unix socket
SOCKET. Each connection asks for one `horarium …` command: a header (the length of the request),
three file descriptors (the command's standard input, output and error), then the request as JSON
(`argv`, `env`, `cwd`). The server forks; the child takes those descriptors, folder and
environment and runs `horarium.cli` as `python -m horarium.cli` would. The server answers the
child's pid on the connection, and its exit code (as `subprocess` reports it: negative for a
signal) when it ends. It exits when its standard input closes (the test process is gone).

The server itself starts no thread, opens no connection and no event loop before it forks: a
child starts from freshly imported modules, as a new process would.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import pkgutil
import runpy
import select
import socket
import struct
import sys
import threading
import time
import traceback
from typing import Any

HEADER = struct.Struct("!I")
REAP_SECONDS = 0.02  # how often ended children are looked for while nothing else happens

# Loaded by `horarium serve` when it starts rather than when it is imported.
LATE_IMPORTS = (
    "uvicorn.lifespan.on",
    "uvicorn.loops.auto",
    "uvicorn.loops.asyncio",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.http.httptools_impl",
    "uvicorn.protocols.websockets.auto",
    "sqlalchemy.dialects.sqlite.aiosqlite",
    "sqlalchemy.dialects.postgresql.asyncpg",
    "aiosqlite",
    "asyncpg",
)


def preload() -> None:
    """Import every Horarium module (each command's code is then already loaded) and what
    `serve` loads late; a module that fails to import is left to the child that needs it."""
    import horarium

    names = [
        module.name
        for module in pkgutil.walk_packages(horarium.__path__, "horarium.")
        if not module.name.endswith("__main__")
    ]
    for name in [*names, *LATE_IMPORTS]:
        try:
            importlib.import_module(name)
        except Exception:
            pass


def _read_request(connection: socket.socket) -> tuple[dict[str, Any], list[int]]:
    header, fds, _flags, _address = socket.recv_fds(connection, HEADER.size, 3)
    (length,) = HEADER.unpack(header)
    payload = b""
    while len(payload) < length:
        chunk = connection.recv(length - len(payload))
        if not chunk:
            raise ConnectionError("request cut short")
        payload += chunk
    return json.loads(payload), fds


def _exit_code(exit: SystemExit) -> int:
    """What the interpreter makes of a SystemExit reaching the top: None is 0, an int itself,
    anything else is printed to standard error and is 1."""
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


def _run_command(argv: list[str]) -> int:
    sys.argv = ["horarium", *argv]
    try:
        runpy.run_module("horarium.cli", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit:
        code = _exit_code(exit)
    except BaseException:
        traceback.print_exc()
        code = 1
    return code


def _finish(code: int) -> None:
    """End the child as the interpreter ends: wait for its non-daemon threads, run its exit
    handlers, flush its output."""
    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    finally:
        os._exit(code)


def _child(request: dict[str, Any], fds: list[int], *inherited: socket.socket) -> None:
    for own in inherited:
        own.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # the zone of this environment's TZ, as a new process would read it
    _finish(_run_command(request["argv"]))


def serve(path: str) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)  # SOCKET appears once it accepts connections
    waiting: dict[int, socket.socket] = {}  # a running child's pid: its requester's connection
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], REAP_SECONDS)
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            return  # the test process is gone; its children end with their own tests
        if listener in ready:
            connection, _ = listener.accept()
            request, fds = _read_request(connection)
            pid = os.fork()
            if pid == 0:
                _child(request, fds, listener, connection, *waiting.values())
            for fd in fds:
                os.close(fd)
            connection.sendall(b"%d\n" % pid)
            waiting[pid] = connection
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            connection = waiting.pop(pid)
            try:
                connection.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))
            except OSError:
                pass  # the requester is gone
            connection.close()


if __name__ == "__main__":  # not when a process pool's child imports this module again
    preload()
    # What the imports made lives as long as any child: out of every child's collections.
    gc.collect()
    gc.freeze()
    serve(sys.argv[1])
