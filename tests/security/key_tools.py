"""Helpers of the authentication tests: the `horarium keys` command against a running server's
database, the api_keys rows as stored, and ARM paths."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests import forkserver
from tests.server_process import ServerProcess, database_url

API_VERSION = {"api-version": "2016-03-01"}


def keys_cli(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """`horarium keys …` on the server's database (stdout and stderr kept apart)."""
    command = [sys.executable, "-m", "horarium.cli", "keys", *args]
    command += ["--data-dir", str(server.data_dir)]
    if server.database:
        command += ["--database", server.database]
    return forkserver.run(command, capture_output=True, text=True, timeout=60, check=False)


def new_key(server: ServerProcess, subscription: str, *more: str) -> str:
    """A new key's token (`more`: --role, --name, --expires-in …)."""
    made = keys_cli(server, "create", "--subscription", subscription, *more)
    assert made.returncode == 0, made.stderr
    return made.stdout.strip()


def in_database(server: ServerProcess, work: Callable[[Any], Any]) -> Any:
    """`await work(conn)` in a write transaction on the server's database."""
    from horarium.store.core.db import create_engine, write_transaction

    async def run() -> Any:
        engine = create_engine(database_url(server))
        try:
            async with write_transaction(engine) as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def key_rows(server: ServerProcess) -> list[dict[str, Any]]:
    """Every api_keys row, every column, as stored."""
    from sqlalchemy import select

    from horarium.store.core.schema import api_keys

    async def read(conn: Any) -> list[dict[str, Any]]:
        return [dict(row._mapping) for row in await conn.execute(select(api_keys))]

    return list(in_database(server, read))


def expired_key(server: ServerProcess, subscription: str) -> str:
    """A key made two days ago that expired a day ago."""
    from horarium.api.api_keys import issue
    from horarium.api.principal import Role

    async def make(conn: Any) -> str:
        issued = await issue(
            conn,
            subscription=subscription,
            role=Role.CONTRIBUTOR,
            name=f"expired-{subscription}",
            now=datetime.now(UTC) - timedelta(days=2),
            expires_in=timedelta(days=1),
        )
        return issued.token

    return str(in_database(server, make))


def client(server: ServerProcess, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(
        base_url=server.base_url, params=API_VERSION, headers=headers, timeout=30,
        verify=server.verify,
    )  # fmt: skip


def collection_path(subscription: str, name: str = "jc", group: str = "rg") -> str:
    return (
        f"/subscriptions/{subscription}/resourceGroups/{group}"
        f"/providers/Microsoft.Scheduler/jobCollections/{name}"
    )


COLLECTION_BODY = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
JOB_BODY = {
    "properties": {
        "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
        "recurrence": {"frequency": "Hour", "interval": 1},
    }
}
