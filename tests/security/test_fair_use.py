"""Fair use: a subscription holds a bounded number of job collections (exact under concurrent
creates), and `POST …/run` queues at most one waiting run per job and never runs a Disabled job."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.api.api_client import Api, error_of, http_job
from tests.server_process import DATABASES, ServerProcess, serving

LIMIT = 5
OPTION = "--max-collections-per-subscription"
FAR_FUTURE = "2099-01-01T00:00:00Z"


@pytest.fixture(scope="module", params=DATABASES)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp(f"fair-{request.param}")
    with serving(request.param, workdir, args=[OPTION, str(LIMIT)]) as s:
        yield s


COLLECTION_BODY = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}


def _listed(api: Api) -> list[str]:
    response = api.get(
        f"/subscriptions/{api.subscription}/providers/Microsoft.Scheduler/jobCollections"
    )
    assert response.status_code == 200, response.text
    return sorted(c["name"] for c in response.json()["value"])


# -- collections per subscription ------------------------------------------------------------


def test_a_subscription_may_not_hold_more_collections_than_the_limit(api: Api) -> None:
    names = [f"c{i}" for i in range(LIMIT)]
    for i, name in enumerate(names):
        group = "rg1" if i % 2 else "rg2"  # the limit is per subscription, across groups
        assert api.put(api.collection(name, group), COLLECTION_BODY).status_code == 201
    refused = api.put(api.collection("one-more"), COLLECTION_BODY)
    assert refused.status_code == 409, refused.text
    error = error_of(refused)
    assert error["code"] == "JobCollectionCountQuotaExceeded"
    assert f"at most {LIMIT} per subscription" in error["message"]
    assert OPTION in error["message"]
    assert api.get(api.collection("one-more")).status_code == 404
    # Replacing or changing a collection it holds is not creating one.
    assert api.put(api.collection("c1", "rg1"), COLLECTION_BODY).status_code == 200
    assert api.patch(api.collection("c1", "rg1"), {"tags": {"a": "b"}}).status_code == 200
    # Other subscriptions have their own count.
    assert Api(api.server).new_collection()
    # Deleting one makes room again.
    assert api.delete(api.collection("c0", "rg2")).status_code == 200
    assert api.put(api.collection("one-more"), COLLECTION_BODY).status_code == 201
    assert len(_listed(api)) == LIMIT


def test_concurrent_creates_never_exceed_the_limit(api: Api) -> None:
    """20 creates at once in one subscription: exactly LIMIT succeed, the rest are 409."""

    async def create_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(
            base_url=api.server.base_url,
            headers=api.server.auth_headers(),
            params={"api-version": "2016-03-01"},
            timeout=60,
        ) as http:
            return await asyncio.gather(
                *(http.put(api.collection(f"race{i}"), json=COLLECTION_BODY) for i in range(20))
            )

    responses = asyncio.run(create_all())
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [201] * LIMIT + [409] * (20 - LIMIT), [r.text for r in responses]
    assert {error_of(r)["code"] for r in responses if r.status_code == 409} == {
        "JobCollectionCountQuotaExceeded"
    }
    assert len(_listed(api)) == LIMIT


# -- run now ---------------------------------------------------------------------------------


def test_a_disabled_job_cannot_be_run_now(api: Api) -> None:
    collection = api.new_collection()
    path = api.job(collection, "off")
    assert api.put(path, http_job(state="Disabled")).status_code == 201
    response = api.post(path + "/run")
    assert response.status_code == 409, response.text
    error = error_of(response)
    assert error["code"] == "JobStateConflict"
    assert "Disabled" in error["message"]
    # Enabled again, it may be run.
    assert api.patch(path, {"properties": {"state": "Enabled"}}).status_code == 200
    assert api.post(path + "/run").status_code == 200


def test_a_second_run_now_while_the_first_waits_is_refused(api: Api) -> None:
    collection = api.new_collection()
    path = api.job(collection, "once")
    other = api.job(collection, "other")
    for job in (path, other):
        assert api.put(job, http_job(startTime=FAR_FUTURE)).status_code == 201
    assert api.post(path + "/run").status_code == 200
    for _ in range(3):
        response = api.post(path + "/run")
        assert response.status_code == 409, response.text
        assert error_of(response)["code"] == "JobRunAlreadyPending"
        assert "has not started yet" in error_of(response)["message"]
    assert api.post(other + "/run").status_code == 200  # per job


def test_a_completed_job_may_still_be_run_now(api: Api) -> None:
    """Run-now leaves the state alone; Completed means the schedule is over, not stopped."""
    collection = api.new_collection()
    path = api.job(collection, "over")
    body = http_job(
        startTime="2020-01-01T00:00:00Z",
        recurrence={"frequency": "Day", "endTime": "2020-01-02T00:00:00Z"},
    )
    assert api.put(path, body).status_code == 201
    assert api.get(path).json()["properties"]["state"].lower() == "completed"
    assert api.post(path + "/run").status_code == 200
    assert api.post(path + "/run").status_code == 409
    assert api.get(path).json()["properties"]["state"].lower() == "completed"


class _Target:
    """An HTTP server on 127.0.0.1 that answers 200 and counts the requests per path."""

    def __init__(self) -> None:
        hits: list[str] = []
        self.hits = hits

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _wait_until(check: Callable[[], bool], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen in {seconds} s"
        time.sleep(0.05)


@pytest.fixture(scope="module", params=DATABASES)
def engine_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp(f"fair-engine-{request.param}")
    with serving(request.param, workdir, engine=True) as s:
        yield s


def test_a_job_may_be_run_again_once_its_run_has_started(engine_server: ServerProcess) -> None:
    target = _Target()
    api = Api(engine_server)
    try:
        collection = api.new_collection()
        path = api.job(collection, "again")
        body = http_job(uri=f"{target.url}/again", startTime=FAR_FUTURE)
        assert api.put(path, body).status_code == 201
        assert api.post(path + "/run").status_code == 200
        _wait_until(lambda: len(target.hits) == 1, "the first run")
        assert api.post(path + "/run").status_code == 200
        _wait_until(lambda: len(target.hits) == 2, "the second run")
        assert api.get(path).json()["properties"]["state"].lower() == "enabled"
    finally:
        api.http.close()
        target.close()
