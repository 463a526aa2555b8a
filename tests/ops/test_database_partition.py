"""A silent network partition between `horarium serve` and PostgreSQL (a proxy on 127.0.0.1
that holds every byte, `db_proxy.freeze`): API requests answer 503 ServiceUnavailable within
`--database-timeout`, not after the partition; when it heals, they answer 200 again. Before
the timeout existed a request hung for the whole partition (100 s observed). And a PostgreSQL
that has no connection to give (too many clients) is an outage too: 503, not 500."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.api.api_client import Api
from tests.db_proxy import DatabaseProxy
from tests.db_proxy import proxied_database as proxied_database
from tests.migrated_databases import migrated_pg_database
from tests.server_process import running_server
from tests.support import admin_execute, wait_until

pytestmark = pytest.mark.postgres

TIMEOUT = 2  # --database-timeout, seconds
PARTITION = 60.0  # seconds the network stays silent at most: far beyond any answer expected


def test_requests_answer_503_within_the_timeout_of_a_silent_partition(
    proxied_database: tuple[str, DatabaseProxy], tmp_path: Path
) -> None:
    database, proxy = proxied_database
    args = ["--database-timeout", str(TIMEOUT)]
    with running_server(tmp_path, database=database, engine=True, args=args) as server:
        api = Api(server)
        collection = api.collection(api.new_collection("P20Premium"))
        assert api.get(collection).status_code == 200

        proxy.freeze()
        frozen_at = time.monotonic()
        try:
            answers = []
            for _ in range(3):  # the pooled connection, then the ones after it
                began = time.monotonic()
                response = api.get(collection)
                answers.append((response.status_code, round(time.monotonic() - began, 1)))
                assert response.status_code == 503, response.text
                assert response.json()["error"]["code"] == "ServiceUnavailable"
                assert response.headers["Retry-After"]
            # Each answered within the timeout and a connection attempt's, not the partition.
            assert time.monotonic() - frozen_at < PARTITION / 2, answers
            ready = httpx.get(server.url("/readyz"), timeout=PARTITION)
            assert ready.status_code == 503, ready.text
        finally:
            proxy.thaw()

        wait_until(
            lambda: api.get(collection).status_code == 200,
            "the API to answer 200 once the network heals",
            timeout=60,
        )
        assert "Traceback" not in server.log()


def _as_owner(database: str, *statements: str) -> None:
    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(database)
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(run())


def test_requests_answer_503_while_postgresql_has_no_connection_to_give(tmp_path: Path) -> None:
    role = f"horarium_full_{uuid.uuid4().hex[:8]}"
    admin_execute(f'CREATE ROLE "{role}" LOGIN')
    try:
        with migrated_pg_database() as database:
            _as_owner(
                database,
                f'GRANT USAGE, CREATE ON SCHEMA public TO "{role}"',
                f'GRANT ALL ON ALL TABLES IN SCHEMA public TO "{role}"',
                f'GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "{role}"',
            )
            as_role = database.replace("postgres@", f"{role}@", 1)
            with running_server(tmp_path, database=as_role) as server:
                api = Api(server)
                collection = api.collection(api.new_collection())
                assert api.get(collection).status_code == 200
                # PostgreSQL refuses the role every new connection ("too many connections for
                # role", as "too many clients already" when the server is full), and the pooled
                # ones are gone.
                admin_execute(f'ALTER ROLE "{role}" CONNECTION LIMIT 0')
                admin_execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    f" WHERE usename = '{role}'"
                )
                response = api.get(collection)
                assert response.status_code == 503, response.text
                assert response.json()["error"]["code"] == "ServiceUnavailable"
                assert response.headers["Retry-After"]
                admin_execute(f'ALTER ROLE "{role}" CONNECTION LIMIT -1')
                wait_until(
                    lambda: api.get(collection).status_code == 200,
                    "the API to answer 200 once PostgreSQL takes connections again",
                )
                assert "Traceback" not in server.log()
    finally:
        admin_execute(f'DROP ROLE IF EXISTS "{role}"')
