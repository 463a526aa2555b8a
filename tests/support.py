"""Shared test helpers: reaching real local services, free ports, fresh PostgreSQL databases."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_ADMIN_URL = os.environ.get("HORARIUM_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() == "true"


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip (with the reason) when a local service is unreachable; under CI=true, fail."""
    if port_open(host, port):
        return
    reason = f"{name} is not reachable on {host}:{port}"
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: it must run)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _admin_execute(sql: str) -> None:
    """Run one statement on the admin database with asyncpg (CREATE/DROP DATABASE)."""
    import asyncio

    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(PG_ADMIN_URL)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run())


@contextmanager
def fresh_pg_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for one test (or module); dropped afterwards."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    name = f"horarium_{uuid.uuid4().hex[:12]}"
    _admin_execute(f'CREATE DATABASE "{name}"')
    base = PG_ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        _admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
