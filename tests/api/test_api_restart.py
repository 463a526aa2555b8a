"""Data survives a restart: stop the server process, start it again, GET returns the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.api_client import Api, http_job
from tests.migrated_databases import migrated_pg_database
from tests.server_process import ServerProcess, running_server


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def restartable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    if request.param == "postgres":
        with migrated_pg_database() as url, running_server(tmp_path, database=url) as server:
            yield server
    else:
        with running_server(tmp_path) as server:
            yield server


def test_everything_is_there_after_a_restart(restartable: ServerProcess) -> None:
    api = Api(restartable)
    name = api.new_collection(quota={"maxJobCount": 7})
    api.patch(api.collection(name), {"tags": {"team": "ops"}})
    body = http_job(recurrence={"frequency": "Day", "interval": 1, "timeZone": "Europe/Berlin"})
    body["properties"]["action"]["request"]["authentication"] = {
        "type": "Basic",
        "username": "u",
        "password": "kept-secret",
    }
    api.put(api.job(name, "daily"), body)
    api.put(api.job(name, "off"), http_job(state="Disabled"))
    before = {
        "collection": api.get(api.collection(name)).json(),
        "jobs": api.get(api.collection(name) + "/jobs").json(),
    }
    api.http.close()

    restartable.restart()

    api = Api(restartable, subscription=api.subscription)
    assert api.get(api.collection(name)).json() == before["collection"]
    assert api.get(api.collection(name) + "/jobs").json() == before["jobs"]
    # The stored secret is still there: a PATCH that does not repeat it still validates.
    patched = api.patch(
        api.job(name, "daily"), {"properties": {"action": {"request": {"body": "x"}}}}
    )
    assert patched.status_code == 200, patched.text
    if restartable.database is None:
        assert (restartable.data_dir / "horarium.sqlite3").exists()
    api.http.close()
