"""`horarium serve`: the management API under uvicorn (one worker), with the scheduler in the
same process unless `--no-engine`. Settings are reviewed before (`cli.serve`,
`horarium.api.exposure`); before uvicorn starts, `horarium.opening.prepare` makes the data folder
private, loads the secret key and migrates the database (sealing secrets stored in clear); on the
first start the admin API key is made (`horarium.api.first_key`)."""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from horarium.api.app import create_api
from horarium.api.authentication import Authenticator
from horarium.api.first_key import make_first_key
from horarium.api.hosts import allowed_hosts
from horarium.api.oidc import OidcVerifier
from horarium.config import Settings
from horarium.loops import running_loop_name
from horarium.opening import prepare
from horarium.store.access import Store
from horarium.store.db import create_engine
from horarium.store.sealing import Keyring

log = logging.getLogger(__name__)


def create_app(settings: Settings, keyring: Keyring) -> FastAPI:
    """The ASGI app: opens the (prepared) database, makes the first API key, then starts the
    scheduler, on startup."""
    authenticator = Authenticator() if settings.auth == "keys" else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = create_engine(settings.database_url, keyring=keyring)
        stop = None
        try:
            app.state.store = Store(db)
            app.state.settings = settings
            if authenticator is not None:
                await _first_key(db, settings)
                authenticator.open(app.state.store, _oidc(settings))
            if settings.run_engine:
                from horarium.engine.service import start_engine, wake

                stop = await start_engine(db, settings)
                app.state.on_change = wake
            print(_listening(settings, engine=stop is not None), flush=True)
            yield
        finally:
            if stop is not None:
                await stop()
            if authenticator is not None:
                await authenticator.close()
            await db.dispose()

    return create_api(
        lifespan,
        authenticator=authenticator,
        allowed_hosts=allowed_hosts(settings),
        public_url=settings.public_url,
    )


async def _first_key(db: AsyncEngine, settings: Settings) -> None:
    path = await make_first_key(db, settings.data_dir)
    if path is not None:
        print(
            f"Made the first API key 'admin' (contributor, every subscription); its token is in"
            f" {path.resolve()}",
            flush=True,
        )


def _oidc(settings: Settings) -> OidcVerifier | None:
    if not settings.oidc_issuer or not settings.oidc_audience:
        return None
    return OidcVerifier(
        settings.oidc_issuer,
        settings.oidc_audience,
        subscriptions_claim=settings.oidc_subscriptions_claim,
        role_claim=settings.oidc_role_claim,
    )


def _listening(settings: Settings, *, engine: bool) -> str:
    scheme = "https" if settings.ssl_certfile else "http"
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    shown = make_url(settings.database_url).render_as_string(hide_password=True)
    auth = "OFF" if settings.auth == "none" else "API keys"
    if settings.auth != "none" and settings.oidc_issuer:
        auth += f" and OpenID Connect tokens of {settings.oidc_issuer}"
    return (
        f"Horarium listening on {scheme}://{host}:{settings.port}"
        f" (database {shown}; scheduler {'on' if engine else 'off'};"
        f" event loop {running_loop_name()}; authentication {auth})"
    )


def log_config() -> dict[str, Any]:
    """uvicorn's logging, plus Horarium's own loggers at INFO on the same output (uvicorn
    configures only its own; without this, INFO lines such as the audit log were dropped)."""
    config: dict[str, Any] = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["formatters"]["horarium"] = {
        "()": "uvicorn.logging.DefaultFormatter",
        "fmt": "%(levelprefix)s %(name)s %(message)s",
    }
    config["handlers"]["horarium"] = {
        "formatter": "horarium",
        "class": "logging.StreamHandler",
        "stream": "ext://sys.stderr",
    }
    config["loggers"]["horarium"] = {"handlers": ["horarium"], "level": "INFO", "propagate": False}
    return config


def serve(settings: Settings) -> None:
    """Run until interrupted (SIGINT / SIGTERM stop it cleanly)."""
    keyring = prepare(settings)
    config = uvicorn.Config(
        create_app(settings, keyring),
        host=settings.host,
        port=settings.port,
        workers=1,
        loop=settings.loop,  # uvicorn reads auto / asyncio / uvloop as `horarium.loops` does
        log_level="info",
        log_config=log_config(),
        lifespan="on",
        server_header=False,
        ssl_certfile=str(settings.ssl_certfile) if settings.ssl_certfile else None,
        ssl_keyfile=str(settings.ssl_keyfile) if settings.ssl_keyfile else None,
    )
    uvicorn.Server(config).run()
