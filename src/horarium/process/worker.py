"""`horarium worker`: the scheduler alone against the database (prepared at start:
`horarium.process.opening.prepare`), no API;
with `--metrics-port`, a listener for /metrics, /healthz and /readyz (`horarium.api.probes`).
SIGINT and SIGTERM stop it cleanly (exit code 0). When a newer version migrates the database
under it, it stops the same way and exits with one line, code 2 (`engine.nodes`)."""

from __future__ import annotations

import asyncio
import logging
import signal
import socket

from sqlalchemy.engine import make_url

from horarium import logs
from horarium.api.authentication import Authenticator
from horarium.api.probes import create_probe_app, install, probe_hosts
from horarium.config import Settings
from horarium.engine.service import running, start_engine, state
from horarium.engine.tasks import cancel_and_wait
from horarium.loops import loop_factory
from horarium.observe.exposition import Exposition
from horarium.observe.health import Readiness
from horarium.observe.loop_lag import LAG
from horarium.process import systemd
from horarium.process.opening import fail, prepare
from horarium.process.ports import bind
from horarium.process.probe_server import ProbeServer
from horarium.store.core.db import create_engine
from horarium.store.core.sealing import Keyring
from horarium.store.resources.access import Store

log = logging.getLogger("horarium.worker")  # the name its log lines have always carried


def run(settings: Settings) -> None:
    sockets: list[socket.socket] = []
    if settings.metrics_port is not None:
        sockets = bind(
            settings.metrics_host,
            settings.metrics_port,
            host_option="--metrics-host",
            port_option="--metrics-port",
        )
    try:
        keyring = prepare(settings, "horarium worker")
        with asyncio.Runner(loop_factory=loop_factory(settings.loop)) as runner:
            runner.run(_work(settings, keyring, sockets))
    except KeyboardInterrupt:  # before the signal handlers were set: stopped all the same
        pass


async def _work(settings: Settings, keyring: Keyring, sockets: list[socket.socket]) -> None:
    db = create_engine(settings.database_url, keyring=keyring, timeout=settings.database_timeout)
    authenticator = Authenticator() if sockets and settings.auth == "keys" else None
    probes = None
    watching = asyncio.create_task(LAG.watch(), name="horarium-loop-lag")
    stopped = asyncio.Event()
    outdated: list[str] = []  # why the scheduler stopped for good (a newer schema)

    def on_outdated(message: str) -> None:
        outdated.append(message)
        stopped.set()

    try:
        stop = await start_engine(db, settings, on_outdated)
        if sockets:
            if authenticator is not None:
                authenticator.open(Store(db), None)
            app = create_probe_app(
                authenticator=authenticator,
                allowed_hosts=probe_hosts(settings),
                metrics_public=settings.metrics_public,
            )
            readiness = Readiness(
                db,
                running,
                roles=("engine",),
                engine=state,
                node_timeout=settings.node_timeout,
            )
            install(app, readiness, Exposition(db, settings.node_timeout))
            probes = ProbeServer(app, sockets)
            probes.start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopped.set)
        logs.announce(_running_line(settings), "worker.running", **_fields(settings))
        systemd.notify("READY=1")
        await stopped.wait()
        log.info("stopping the scheduler")
        systemd.notify("STOPPING=1")
        if probes is not None:
            await probes.stop()
        await stop()
    finally:
        if authenticator is not None:
            await authenticator.close()
        await cancel_and_wait(watching)
        await db.dispose()
    if outdated:
        fail(outdated[0])


def _fields(settings: Settings) -> dict[str, object]:
    return {
        "database": make_url(settings.database_url).render_as_string(hide_password=True),
        "metrics": _metrics_url(settings),
    }


def _metrics_url(settings: Settings) -> str | None:
    if settings.metrics_port is None:
        return None
    host = settings.metrics_host
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{settings.metrics_port}/metrics"


def _running_line(settings: Settings) -> str:
    fields = _fields(settings)
    metrics = f"; metrics on {fields['metrics']}" if fields["metrics"] else ""
    return f"Horarium worker running (database {fields['database']}{metrics})"
