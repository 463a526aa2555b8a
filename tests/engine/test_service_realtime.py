"""End to end, in real time: `horarium serve` (a subprocess) with its scheduler, jobs created
through the REST API, actions hitting real servers on 127.0.0.1 (plain HTTP, HTTPS requiring a
client certificate, an OAuth token endpoint), history and status read back through the API.

REAL-TIME TESTS (about two and a half minutes in all). Retry intervals are at least 15 s and
recurrences at least a minute, as the API's validation requires, so every scenario's job is
created up front by the module fixture and the scenarios progress in parallel; each test then
waits for its own job. Waits are bounded generously; no assertion depends on timing.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.engine.live_servers import FakeAzureAd, LiveServers, Recorder, wait_until
from tests.server_process import ServerProcess

API_VERSION = "2016-03-01"
SECRET = "the-client-secret"


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class Api:
    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.http = httpx.Client(
            base_url=server.base_url, timeout=30, headers=server.auth_headers()
        )
        self.collection = (
            f"/subscriptions/sub-{uuid.uuid4().hex[:6]}/resourceGroups/rg"
            "/providers/Microsoft.Scheduler/jobCollections/engine"
        )

    def call(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return self.http.request(method, path, params={"api-version": API_VERSION}, json=body)

    def create_collection(self) -> None:
        body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
        response = self.call("PUT", self.collection, body)
        assert response.status_code in (200, 201), response.text

    def put_job(self, name: str, properties: dict[str, Any]) -> dict[str, Any]:
        response = self.call("PUT", f"{self.collection}/jobs/{name}", {"properties": properties})
        assert response.status_code in (200, 201), response.text
        return dict(response.json())

    def patch_job(self, name: str, properties: dict[str, Any]) -> dict[str, Any]:
        response = self.call("PATCH", f"{self.collection}/jobs/{name}", {"properties": properties})
        assert response.status_code == 200, response.text
        return dict(response.json())

    def job(self, name: str) -> dict[str, Any]:
        response = self.call("GET", f"{self.collection}/jobs/{name}")
        assert response.status_code == 200, response.text
        return dict(response.json()["properties"])

    def state(self, name: str) -> str:
        """The job's state; the API spells enum values in camelCase, as the live service did."""
        return str(self.job(name)["state"]).lower()

    def run(self, name: str) -> None:
        response = self.call("POST", f"{self.collection}/jobs/{name}/run")
        assert response.status_code == 200, response.text

    def history(self, name: str) -> list[dict[str, Any]]:
        """Newest first, as the API lists it."""
        response = self.call("GET", f"{self.collection}/jobs/{name}/history")
        assert response.status_code == 200, response.text
        return [entry["properties"] for entry in response.json()["value"]]


def http_action(uri: str, **more: Any) -> dict[str, Any]:
    return {"type": "Http", "request": {"uri": uri, "method": "POST", "body": "tick"}, **more}


@dataclass
class World:
    servers: LiveServers
    sink: Recorder
    sink_url: str
    tls: Recorder
    aad: FakeAzureAd
    service: ServerProcess
    api: Api
    downtime: ServerProcess  # a second service, stopped on purpose, for missed executions
    downtime_api: Api
    created: dict[str, datetime] = field(default_factory=dict)

    def hits(self, path: str) -> list[Any]:
        return self.sink.on(path)


def start_service(workdir: Path, env: dict[str, str], args: list[str]) -> ServerProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    service = ServerProcess(workdir, database=None, engine=True, env=env, args=args)
    service.start()
    return service


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from tests.actions.tls_material import make_pki

    root = tmp_path_factory.mktemp("realtime")
    pki = make_pki(root)
    servers = LiveServers()
    sink, tls = Recorder(), Recorder()
    sink_url = servers.sink(sink)
    tls_url = servers.sink(tls, pki.server_context)
    aad = FakeAzureAd(SECRET)
    authority = servers.azure_ad(aad)
    env = {"SSL_CERT_FILE": str(pki.ca_file)}
    # Default lease (300 s): after kill -9, the restarted service takes over at once anyway.
    service = start_service(root / "main", env, ["--aad-authority", authority])
    downtime = start_service(root / "downtime", env, ["--grace-period", "20"])
    api, downtime_api = Api(service), Api(downtime)
    api.create_collection()
    downtime_api.create_collection()
    world = World(servers, sink, sink_url, tls, aad, service, api, downtime, downtime_api)
    now = datetime.now(UTC)

    def put(name: str, properties: dict[str, Any], target: Api = api) -> None:
        world.created[name] = datetime.now(UTC)
        target.put_job(name, properties)

    sink.answer("/flaky", 500, 200)
    sink.answer("/down", 503)
    sink.answer("/doomed", 500)
    sink.answer("/doomed-fallback", 404)
    sink.slow("/slow", 6)
    fifteen = {"retryType": "Fixed", "retryInterval": "00:00:15", "retryCount": 1}
    put("http-once", {"action": http_action(f"{sink_url}/once")})
    put(
        "tls-once",
        {
            "action": {
                "type": "Https",
                "request": {
                    "uri": f"{tls_url}/secure",
                    "method": "GET",
                    "authentication": {
                        "type": "ClientCertificate",
                        "pfx": pki.client_pfx,
                        "password": pki.client_password,
                    },
                },
            }
        },
    )
    put(
        "oauth-once",
        {
            "action": {
                "type": "Http",
                "request": {
                    "uri": f"{sink_url}/oauth",
                    "method": "POST",
                    "authentication": {
                        "type": "ActiveDirectoryOAuth",
                        "tenant": "contoso.onmicrosoft.com",
                        "audience": "https://management.core.windows.net/",
                        "clientId": "app",
                        "secret": SECRET,
                    },
                },
            }
        },
    )
    put(
        "faulted",
        {
            "action": http_action(
                f"{sink_url}/doomed",
                retryPolicy={"retryType": "None"},
                errorAction={
                    **http_action(f"{sink_url}/doomed-fallback"),
                    "retryPolicy": {"retryType": "None"},
                },
            )
        },
    )
    put(
        "later",
        {"startTime": iso(now + timedelta(days=1)), "action": http_action(f"{sink_url}/later")},
    )
    # One run, about ten seconds after the job is created; the next would be after its endTime.
    soon = datetime.now(UTC)
    put(
        "until",
        {
            "startTime": iso(soon - timedelta(seconds=50)),
            "action": http_action(f"{sink_url}/until"),
            "recurrence": {
                "frequency": "Minute",
                "interval": 1,
                "endTime": iso(soon + timedelta(seconds=40)),
            },
        },
    )
    put("flaky", {"action": http_action(f"{sink_url}/flaky", retryPolicy=fifteen)})
    put(
        "fallback",
        {
            "action": http_action(
                f"{sink_url}/down",
                retryPolicy=fifteen,
                errorAction=http_action(f"{sink_url}/fallback"),
            )
        },
    )
    put(
        "pausable",
        {
            "startTime": iso(now + timedelta(seconds=2)),
            "state": "Disabled",
            "action": http_action(f"{sink_url}/pausable"),
            "recurrence": {"frequency": "Minute", "interval": 1},
        },
    )
    put(
        "twice",
        {
            "action": http_action(f"{sink_url}/twice"),
            "recurrence": {"frequency": "Minute", "interval": 1, "count": 2},
        },
    )
    put(
        "minutely",
        {
            "action": http_action(f"{sink_url}/minutely"),
            "recurrence": {"frequency": "Minute", "interval": 1},
        },
        downtime_api,
    )
    # The second service runs the minutely job's first execution, then goes down.
    wait_until(lambda: world.hits("/minutely"), 30, "the minutely job's first run")
    wait_until(lambda: downtime_api.history("minutely"), 30, "its history")
    downtime.stop()
    yield world
    service.stop()
    downtime.stop()
    servers.close()


def completed(entry: dict[str, Any]) -> bool:
    return "status" not in entry  # the live service omits status on Completed entries


def assert_status_matches_history(api: Api, name: str) -> dict[str, Any]:
    props = api.job(name)
    history = api.history(name)
    ran = [e for e in history if e.get("status") != "Postponed"]
    status = props.get("status", {})
    assert status.get("executionCount", 0) == len(ran), (status, history)
    assert status.get("failureCount", 0) == len([e for e in ran if e.get("status") == "Failed"])
    return props


def test_one_time_http_job_runs_once_and_completes(world: World) -> None:
    api = world.api
    wait_until(lambda: api.state("http-once") == "completed", 30, "Completed")
    [hit] = world.hits("/once")
    [entry] = api.history("http-once")
    assert completed(entry)
    assert entry["actionName"] == "MainAction"
    assert (entry["retryCount"], entry["repeatCount"]) == (0, 1)
    assert "200" in entry["message"]
    assert hit.headers["x-ms-execution-tag"]
    assert hit.headers["x-ms-scheduler-jobid"] == "http-once"
    # It ran right after it was created (no startTime: immediately).
    assert parse(entry["startTime"]) >= parse(entry["expectedExecutionTime"])
    props = assert_status_matches_history(api, "http-once")
    assert props["status"]["executionCount"] == 1


def test_https_job_presents_its_client_certificate(world: World) -> None:
    wait_until(lambda: world.api.state("tls-once") == "completed", 30, "Completed")
    [hit] = world.tls.on("/secure")
    assert hit.client_subject == "scheduler-client"
    [entry] = world.api.history("tls-once")
    assert completed(entry)


def test_oauth_job_sends_the_token_from_the_token_endpoint(world: World) -> None:
    wait_until(lambda: world.api.state("oauth-once") == "completed", 30, "Completed")
    [hit] = world.hits("/oauth")
    assert hit.headers["Authorization"] in {f"Bearer {t}" for t in world.aad.issued}


def test_one_time_job_faults_when_action_and_error_action_fail(world: World) -> None:
    api = world.api
    wait_until(lambda: api.state("faulted") == "faulted", 30, "Faulted")
    entries = api.history("faulted")
    assert [(e["actionName"], e.get("status")) for e in entries] == [
        ("ErrorAction", "Failed"),
        ("MainAction", "Failed"),
    ]
    status = assert_status_matches_history(api, "faulted")["status"]
    assert status["faultedCount"] == 1


def test_run_now_runs_at_once_and_keeps_the_schedule(world: World) -> None:
    api = world.api
    before = api.job("later")["status"]["nextExecutionTime"]
    api.run("later")
    wait_until(lambda: world.hits("/later"), 30, "the run-now request")
    [entry] = wait_until(lambda: api.history("later"), 30, "its history")
    assert completed(entry)
    assert entry["repeatCount"] == 0
    after = api.job("later")
    assert after["state"].lower() == "enabled"
    assert after["status"]["nextExecutionTime"] == before
    assert after["status"]["executionCount"] == 1


def test_recurring_job_completes_at_its_end_time(world: World) -> None:
    api = world.api
    wait_until(lambda: api.state("until") == "completed", 60, "Completed")
    assert len(world.hits("/until")) == 1
    assert_status_matches_history(api, "until")


def test_kill_9_while_running_then_restart_replays_with_the_same_tag(world: World) -> None:
    api, service = world.api, world.service
    # Made here, not with the others: its action (6 s) must still be running when the service
    # is killed, however long the tests before this one took.
    api.put_job("in-flight", {"action": http_action(f"{world.sink_url}/slow")})
    wait_until(lambda: world.hits("/slow"), 30, "the slow job to start")
    assert service.process is not None
    os.kill(service.process.pid, signal.SIGKILL)
    service.process.wait(10)
    service.process = None
    service.start()
    wait_until(lambda: api.state("in-flight") == "completed", 60, "Completed")
    first, second = world.hits("/slow")
    assert first.headers["x-ms-execution-tag"] == second.headers["x-ms-execution-tag"]
    [entry] = api.history("in-flight")  # the interrupted attempt left no history
    assert completed(entry)
    assert_status_matches_history(api, "in-flight")


def test_failed_attempt_is_retried_fifteen_seconds_later_and_succeeds(world: World) -> None:
    api = world.api
    wait_until(lambda: api.state("flaky") == "completed", 60, "Completed")
    latest, first = api.history("flaky")
    assert (first.get("status"), first["retryCount"]) == ("Failed", 0)
    assert completed(latest) and latest["retryCount"] == 1
    waited = parse(latest["startTime"]) - parse(first["endTime"])
    assert waited >= timedelta(seconds=15)
    one, two = world.hits("/flaky")
    assert one.headers["x-ms-execution-tag"] == two.headers["x-ms-execution-tag"]
    assert_status_matches_history(api, "flaky")


def test_error_action_runs_after_the_retries_are_exhausted(world: World) -> None:
    api = world.api
    # The main action failed its last attempt: the execution faulted, the error action's
    # success notwithstanding, so the one-time job ends Faulted.
    wait_until(lambda: api.state("fallback") == "faulted", 60, "Faulted")
    entries = api.history("fallback")
    assert [(e["actionName"], e.get("status"), e["retryCount"]) for e in entries] == [
        ("ErrorAction", None, 0),
        ("MainAction", "Failed", 1),
        ("MainAction", "Failed", 0),
    ]
    assert len(world.hits("/fallback")) == 1
    assert assert_status_matches_history(api, "fallback")["status"]["faultedCount"] == 1


def test_disabled_job_does_not_run_until_enabled(world: World) -> None:
    api = world.api
    time.sleep(
        max(
            0.0,
            (world.created["pausable"] + timedelta(seconds=4) - datetime.now(UTC)).total_seconds(),
        )
    )
    assert world.hits("/pausable") == []  # its start time has passed while it was disabled
    enabled = api.patch_job("pausable", {"state": "Enabled"})
    next_at = parse(enabled["properties"]["status"]["nextExecutionTime"])
    assert next_at > datetime.now(UTC) - timedelta(seconds=1)
    wait_until(lambda: world.hits("/pausable"), 90, "the first run after enabling")
    [entry] = wait_until(lambda: api.history("pausable"), 30, "its history")
    assert parse(entry["expectedExecutionTime"]) == next_at


def test_recurring_job_completes_when_its_count_is_reached(world: World) -> None:
    api = world.api
    wait_until(lambda: api.state("twice") == "completed", 120, "Completed")
    entries = api.history("twice")
    assert [e["repeatCount"] for e in entries] == [2, 1]
    gap = parse(entries[0]["expectedExecutionTime"]) - parse(entries[1]["expectedExecutionTime"])
    assert gap == timedelta(minutes=1)
    assert_status_matches_history(api, "twice")


def test_executions_missed_while_the_service_was_down_are_postponed_not_replayed(
    world: World,
) -> None:
    api, service = world.downtime_api, world.downtime
    created = world.created["minutely"]
    # Down until two more executions (created + 1 min, + 2 min) have passed, and up again 5 s
    # after one fell due: the next is then a minute away, beyond the assertions below (were the
    # tests before this one slow, it waits for that point of the minute).
    up_at = created + timedelta(minutes=2, seconds=5)
    now = datetime.now(UTC)
    if up_at < now:
        up_at = now + (up_at - now) % timedelta(minutes=1)
    time.sleep((up_at - now).total_seconds())
    service.start()
    wait_until(lambda: len(world.hits("/minutely")) >= 2, 60, "the catch-up run")
    entries = wait_until(
        lambda: len(api.history("minutely")) >= 3 and api.history("minutely"), 30, "history"
    )
    latest, *postponed, first = entries
    assert completed(latest) and completed(first)
    assert postponed and all(p["status"] == "Postponed" for p in postponed)
    step = timedelta(minutes=1)
    expected = [parse(e["expectedExecutionTime"]) for e in reversed(entries)]
    assert {b - a for a, b in itertools.pairwise(expected)} == {step}
    assert [e["repeatCount"] for e in reversed(entries)] == list(range(1, len(entries) + 1))
    assert len(world.hits("/minutely")) == 2  # one catch-up run, not a burst
    assert_status_matches_history(api, "minutely")
