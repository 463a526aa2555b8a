"""A silent network partition between `horarium serve` and PostgreSQL (a proxy on 127.0.0.1
that holds every byte, `db_proxy.freeze`): API requests answer 503 ServiceUnavailable within
`--database-timeout`, not after the partition; when it heals, they answer 200 again. Before
the timeout existed a request hung for the whole partition (100 s observed)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.db_proxy import DatabaseProxy
from tests.server_process import running_server
from tests.support import fresh_pg_database, wait_until

pytestmark = pytest.mark.postgres

API = {"api-version": "2016-03-01"}
TIMEOUT = 2  # --database-timeout, seconds
PARTITION = 60.0  # seconds the network stays silent at most: far beyond any answer expected


@pytest.fixture
def proxied_database() -> Iterator[tuple[str, DatabaseProxy]]:
    with fresh_pg_database() as url, DatabaseProxy(5432) as proxy:
        through = make_url(url).set(host="127.0.0.1", port=proxy.port)
        yield through.render_as_string(hide_password=False), proxy


def test_requests_answer_503_within_the_timeout_of_a_silent_partition(
    proxied_database: tuple[str, DatabaseProxy], tmp_path: Path
) -> None:
    database, proxy = proxied_database
    args = ["--database-timeout", str(TIMEOUT)]
    with running_server(tmp_path, database=database, engine=True, args=args) as server:
        http = httpx.Client(
            base_url=server.base_url, timeout=PARTITION * 2, headers=server.auth_headers()
        )
        collection = (
            f"/subscriptions/sub-{uuid.uuid4().hex[:6]}/resourceGroups/rg"
            "/providers/Microsoft.Scheduler/jobCollections/partition"
        )
        body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
        assert http.put(collection, params=API, json=body).status_code == 201
        assert http.get(collection, params=API).status_code == 200

        proxy.freeze()
        frozen_at = time.monotonic()
        try:
            answers = []
            for _ in range(3):  # the pooled connection, then the ones after it
                began = time.monotonic()
                response = http.get(collection, params=API)
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
            lambda: http.get(collection, params=API).status_code == 200,
            "the API to answer 200 once the network heals",
            timeout=60,
        )
        assert "Traceback" not in server.log()
