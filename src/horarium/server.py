"""`horarium serve`: the management API under uvicorn (one worker), with the scheduler in the
same process unless `--no-engine`. Before uvicorn starts, `horarium.opening.prepare` makes the
data folder private, loads the secret key and migrates the database (and seals secrets stored
in clear)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI
from sqlalchemy.engine import make_url

from horarium.api.app import create_api
from horarium.config import Settings
from horarium.loops import running_loop_name
from horarium.opening import prepare
from horarium.store.access import Store
from horarium.store.db import create_engine
from horarium.store.sealing import Keyring

log = logging.getLogger(__name__)


def create_app(settings: Settings, keyring: Keyring) -> FastAPI:
    """The ASGI app: opens the (prepared) database, then starts the scheduler, on startup."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        db = create_engine(settings.database_url, keyring=keyring)
        stop = None
        try:
            app.state.store = Store(db)
            if settings.run_engine:
                from horarium.engine.service import start_engine, wake

                stop = await start_engine(db, settings)
                app.state.on_change = wake
            shown = make_url(settings.database_url).render_as_string(hide_password=True)
            print(
                f"Horarium listening on http://{settings.host}:{settings.port}"
                f" (database {shown}; scheduler {'on' if stop else 'off'};"
                f" event loop {running_loop_name()})",
                flush=True,
            )
            yield
        finally:
            if stop is not None:
                await stop()
            await db.dispose()

    return create_api(lifespan)


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
        lifespan="on",
        server_header=False,
    )
    uvicorn.Server(config).run()
