"""`horarium serve`: the management API under uvicorn (one worker), with the scheduler in the
same process unless `--no-engine`. Settings are reviewed before (`cli.serving.serve`,
`horarium.api.exposure`); before uvicorn starts, the port is bound (`horarium.process.ports`)
and `horarium.process.opening.prepare` makes the data folder private, loads the secret key and
migrates the database (sealing secrets stored in clear) — a mistake is one line, exit code 2; on
the first start the admin API key is made (`horarium.api.first_key`). With `--metrics-port` the
probes also answer on a port of their own (`horarium.process.probe_server`)."""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from types import FrameType
from typing import TYPE_CHECKING

import uvicorn
from fastapi import FastAPI
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium import logs
from horarium.api import offload, probes
from horarium.api.app import create_api
from horarium.api.authentication import Authenticator
from horarium.api.first_key import ADMIN_TOKEN_FILE, make_first_key
from horarium.api.hosts import allowed_hosts
from horarium.config import Settings
from horarium.engine.tasks import cancel_and_wait
from horarium.loops import running_loop_name
from horarium.observe.exposition import Exposition
from horarium.observe.health import Readiness
from horarium.observe.loop_lag import LAG
from horarium.process import systemd
from horarium.process.head_timeout import with_head_timeout
from horarium.process.opening import fail, prepare
from horarium.process.ports import bind
from horarium.process.probe_server import ProbeServer
from horarium.store.core.checkpoints import checkpoint_forever
from horarium.store.core.db import create_engine
from horarium.store.core.sealing import Keyring
from horarium.store.resources.access import Store

if TYPE_CHECKING:
    from horarium.api.oidc import OidcVerifier


def create_app(
    settings: Settings,
    keyring: Keyring,
    metrics_sockets: Sequence[socket.socket] = (),
    on_outdated: Callable[[str], None] | None = None,
) -> FastAPI:
    """The ASGI app: opens the (prepared) database, makes the first API key, then starts the
    scheduler (and the `metrics_sockets` listener), on startup. `on_outdated`: the scheduler's
    word that a newer version migrated the database (`start_engine`)."""
    authenticator = Authenticator() if settings.auth == "keys" else None
    hosts = allowed_hosts(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = create_engine(
            settings.database_url,
            keyring=keyring,
            timeout=settings.database_timeout,
            background_checkpoints=True,  # the `checkpoints` task below
        )
        stop = None
        listener = None
        watching = asyncio.create_task(LAG.watch(), name="horarium-loop-lag")
        checkpoints = asyncio.create_task(checkpoint_forever(db), name="horarium-checkpoints")
        try:
            app.state.store = Store(db)
            app.state.settings = settings
            if authenticator is not None:
                await _first_key(db, settings)
                authenticator.open(app.state.store, _oidc(settings))
            engine_running, engine_state = None, None
            if settings.run_engine:
                from horarium.engine.service import running, start_engine, state, wake

                stop = await start_engine(db, settings, on_outdated)
                app.state.on_change = wake
                engine_running, engine_state = running, state
            readiness = Readiness(
                db,
                engine_running,
                roles=("api", "engine") if settings.run_engine else ("api",),
                engine=engine_state,
                node_timeout=settings.node_timeout,
            )
            exposition = Exposition(db, settings.node_timeout)
            probes.install(app, readiness, exposition)
            if metrics_sockets:
                probe_app = probes.create_probe_app(
                    authenticator=authenticator,
                    allowed_hosts=hosts | probes.probe_hosts(settings),
                    metrics_public=settings.metrics_public,
                )
                probes.install(probe_app, readiness, exposition)
                listener = ProbeServer(probe_app, metrics_sockets)
                listener.start()
            logs.announce(
                _listening(settings, engine=stop is not None),
                "server.listening",
                **_listening_fields(settings, engine=stop is not None),
            )
            systemd.notify("READY=1")
            yield
        finally:
            systemd.notify("STOPPING=1")
            if listener is not None:
                await listener.stop()
            if stop is not None:
                await stop()
            if authenticator is not None:
                await authenticator.close()
            await cancel_and_wait(watching)
            await cancel_and_wait(checkpoints)
            offload.shut_down()
            store = getattr(app.state, "store", None)
            if store is not None:
                await store.close()
            await db.dispose()

    return create_api(
        lifespan,
        authenticator=authenticator,
        allowed_hosts=hosts,
        public_url=settings.public_url,
        metrics_public=settings.metrics_public,
    )


async def _first_key(db: AsyncEngine, settings: Settings) -> None:
    path = await make_first_key(db, settings.data_dir)
    if path is not None:
        logs.announce(
            f"Made the first API key 'admin' (contributor, every subscription); its token is in"
            f" {path.resolve()}",
            "server.first_key",
            key="admin",
            token_file=str(path.resolve()),
        )


def _oidc(settings: Settings) -> OidcVerifier | None:
    if not settings.oidc_issuer or not settings.oidc_audience:
        return None
    from horarium.api.oidc import OidcVerifier  # JWT and aiohttp: only with an issuer

    return OidcVerifier(
        settings.oidc_issuer,
        settings.oidc_audience,
        subscriptions_claim=settings.oidc_subscriptions_claim,
        role_claim=settings.oidc_role_claim,
    )


def _listening_fields(settings: Settings, *, engine: bool) -> dict[str, object]:
    scheme = "https" if settings.ssl_certfile else "http"
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    auth = "OFF" if settings.auth == "none" else "API keys"
    if settings.auth != "none" and settings.oidc_issuer:
        auth += f" and OpenID Connect tokens of {settings.oidc_issuer}"
    metrics = None
    if settings.metrics_port is not None:
        metrics_host = settings.metrics_host
        metrics_host = f"[{metrics_host}]" if ":" in metrics_host else metrics_host
        metrics = f"http://{metrics_host}:{settings.metrics_port}/metrics"
    url = f"{scheme}://{host}:{settings.port}"
    token_file = settings.data_dir / ADMIN_TOKEN_FILE
    return {
        "url": url,
        "dashboard": f"{(settings.public_url or url).rstrip('/')}/ui/",
        "admin_token": (
            str(token_file.resolve()) if settings.auth != "none" and token_file.exists() else None
        ),
        "database": make_url(settings.database_url).render_as_string(hide_password=True),
        "scheduler": "on" if engine else "off",
        "event_loop": running_loop_name(),
        "authentication": auth,
        "metrics": metrics,
    }


def _listening(settings: Settings, *, engine: bool) -> str:
    f = _listening_fields(settings, engine=engine)
    metrics = f"; metrics also on {f['metrics']}" if f["metrics"] else ""
    token = f" (the admin token is in {f['admin_token']})" if f["admin_token"] else ""
    return (
        f"Horarium listening on {f['url']}"
        f" (database {f['database']}; scheduler {f['scheduler']};"
        f" event loop {f['event_loop']}; authentication {f['authentication']}{metrics});"
        f" dashboard {f['dashboard']}{token}"
    )


def serve(settings: Settings) -> None:
    """Run until interrupted: SIGINT (Ctrl-C) and SIGTERM stop it cleanly (the scheduler
    drained), exit code 0."""
    try:
        sockets = bind(settings.host, settings.port, host_option="--host", port_option="--port")
        metrics_sockets: list[socket.socket] = []
        if settings.metrics_port is not None:
            metrics_sockets = bind(
                settings.metrics_host,
                settings.metrics_port,
                host_option="--metrics-host",
                port_option="--metrics-port",
            )
        keyring = prepare(settings, "horarium serve")
        outdated = _Outdated()
        config = uvicorn.Config(
            create_app(settings, keyring, metrics_sockets, outdated.stop),
            workers=1,
            loop=settings.loop,  # uvicorn reads auto / asyncio / uvloop as `horarium.loops` does
            log_config=None,  # `horarium.logs.setup` has configured logging
            log_level=None,
            access_log=settings.access_log,
            lifespan="on",
            server_header=False,
            http=with_head_timeout(settings.header_timeout),
            timeout_keep_alive=settings.keep_alive_timeout,
            # The client address and scheme come from the connection, unless it is from a
            # proxy named by --forwarded-allow-ips.
            proxy_headers=bool(settings.forwarded_allow_ips),
            forwarded_allow_ips=list(settings.forwarded_allow_ips) or None,
            ssl_certfile=str(settings.ssl_certfile) if settings.ssl_certfile else None,
            ssl_keyfile=str(settings.ssl_keyfile) if settings.ssl_keyfile else None,
        )
        outdated.server = uvicorn.Server(config)
        # uvicorn raises the SIGTERM it caught again once it has shut down (drained): with
        # this handler in place of the default one, that ends `run` and the process exits 0.
        signal.signal(signal.SIGTERM, _stopped)
        outdated.server.run(sockets=sockets)
    except KeyboardInterrupt:
        # uvicorn has shut down cleanly and re-raised the signal it caught: stopping is what
        # was asked, not an error.
        pass
    if outdated.reason is not None:
        fail(outdated.reason)


def _stopped(_signal: int, _frame: FrameType | None) -> None:
    """SIGTERM handed back by uvicorn after a clean shutdown: nothing more to do."""


class _Outdated:
    """The scheduler's word that a newer version migrated the database: the server stops (as
    on SIGTERM) and the process exits with that one line, code 2."""

    def __init__(self) -> None:
        self.server: uvicorn.Server | None = None
        self.reason: str | None = None

    def stop(self, reason: str) -> None:
        self.reason = reason
        if self.server is not None:
            self.server.should_exit = True
