"""The `azure-mgmt-scheduler` 7.0.0 SDK, pointed at Horarium by its base URL, runs a full
scenario with an API key; the scheduler runs in the server so that `run` produces history. The
job's target is a real HTTP server on 127.0.0.1 started by the test.

Over http the key goes in an `authentication_policy` (azure-core refuses bearer tokens over
plain http); over https a plain azure-core TokenCredential returns it, and the SDK verifies the
server's certificate against the test's CA (`connection_verify`)."""

from __future__ import annotations

import base64
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.mgmt.scheduler import SchedulerManagementClient
from azure.mgmt.scheduler import models as m

from tests.api.api_client import Api, http_job
from tests.server_fixtures import engine_server as engine_server
from tests.server_process import ServerProcess, running_server
from tests.support import wait_until


class KeyCredential:
    """A TokenCredential that hands out a Horarium API key as its bearer token."""

    def __init__(self, key: str | None) -> None:
        assert key, "the server wrote no admin token"
        self.key = key

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(self.key, int(time.time()) + 3600)


class BearerOverHttp(SansIOHTTPPolicy[Any, Any]):
    """Adds the credential's bearer token; azure-core's own policy refuses plain http URLs."""

    def __init__(self, credential: KeyCredential) -> None:
        self.credential = credential

    def on_request(self, request: PipelineRequest[Any]) -> None:
        token = self.credential.get_token("https://management.azure.com/.default").token
        request.http_request.headers["Authorization"] = f"Bearer {token}"


class Target:
    """A real HTTP server on 127.0.0.1 that records what it is sent."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                received.append(
                    {
                        "path": self.path,
                        "authorization": self.headers.get("authorization"),
                        "body": self.rfile.read(length).decode(),
                    }
                )
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def https_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """`serve --ssl-certfile/--ssl-keyfile` (SQLite) with a certificate for 127.0.0.1 made by the
    test's own CA."""
    from tests.actions.tls_material import make_pki

    pki = make_pki(tmp_path)
    pem = str(tmp_path / "server.pem")  # the certificate and its key
    tls = ["--ssl-certfile", pem, "--ssl-keyfile", pem]
    with running_server(tmp_path, engine=True, args=tls, ca_file=pki.ca_file) as server:
        yield server


def test_sdk_scenario(engine_server: ServerProcess) -> None:
    credential = KeyCredential(engine_server.token)
    client = SchedulerManagementClient(
        credential,
        str(uuid.uuid4()),
        base_url=engine_server.base_url,
        authentication_policy=BearerOverHttp(credential),
    )
    _scenario(client)


def test_sdk_scenario_over_https_with_a_token_credential(https_server: ServerProcess) -> None:
    assert https_server.base_url.startswith("https://")
    client = SchedulerManagementClient(
        KeyCredential(https_server.token),
        str(uuid.uuid4()),
        base_url=https_server.base_url,
        connection_verify=str(https_server.ca_file),
    )
    _scenario(client)


def test_the_sdk_without_a_valid_key_gets_authentication_failed(
    engine_server: ServerProcess,
) -> None:
    credential = KeyCredential("hrm_not-a-key")
    client = SchedulerManagementClient(
        credential,
        str(uuid.uuid4()),
        base_url=engine_server.base_url,
        authentication_policy=BearerOverHttp(credential),
    )
    try:
        with pytest.raises(HttpResponseError) as raised:
            client.job_collections.get("rg", "jc")
    finally:
        client.close()
    assert raised.value.status_code == 401
    assert raised.value.error is not None and raised.value.error.code == "AuthenticationFailed"


def _scenario(client: SchedulerManagementClient) -> None:
    """Collections and jobs through the SDK: create, get, list, patch, disable, enable, run,
    history, delete."""
    target = Target()
    group, name = "sdk-rg", "sdkcollection"
    try:
        # -- collection: create / get / list / patch / disable / enable -----------------------
        created = client.job_collections.create_or_update(
            group,
            name,
            m.JobCollectionDefinition(
                location="westus",
                properties=m.JobCollectionProperties(
                    sku=m.Sku(name="Standard"),
                    state="Enabled",
                    quota=m.JobCollectionQuota(
                        max_job_count=10,
                        max_recurrence=m.JobMaxRecurrence(frequency="Minute", interval=1),
                    ),
                ),
            ),
        )
        assert created.name == name and created.location == "West US"
        assert created.properties.sku.name == m.SkuDefinition.STANDARD
        # azure-mgmt-scheduler 7.x types enums as plain strings: SDK users see the live
        # service's casing (camelCase for recurrence and job fields, PascalCase for the others).
        assert created.properties.quota.max_recurrence.frequency == "minute"
        assert created.id.endswith(
            f"/resourceGroups/{group}/providers/Microsoft.Scheduler/jobCollections/{name}"
        )
        fetched = client.job_collections.get(group, name)
        assert fetched.properties.state == m.JobCollectionState.ENABLED
        assert [c.name for c in client.job_collections.list_by_resource_group(group)] == [name]
        assert name in [c.name for c in client.job_collections.list_by_subscription()]
        patched = client.job_collections.patch(
            group, name, m.JobCollectionDefinition(tags={"env": "test"})
        )
        assert patched.tags == {"env": "test"}
        assert patched.properties.quota.max_job_count == 10
        client.job_collections.begin_disable(group, name).result()
        assert (
            client.job_collections.get(group, name).properties.state
            == m.JobCollectionState.DISABLED
        )
        client.job_collections.begin_enable(group, name).result()
        assert (
            client.job_collections.get(group, name).properties.state == m.JobCollectionState.ENABLED
        )

        # -- an HTTP job with Basic authentication and a monthly schedule ----------------------
        start = datetime(2020, 1, 1, tzinfo=UTC)
        job = m.JobDefinition(
            properties=m.JobProperties(
                start_time=start,
                action=m.JobAction(
                    type="Http",
                    request=m.HttpRequest(
                        uri=target.url,
                        method="POST",
                        body="hello",
                        headers={"content-type": "text/plain"},
                        authentication=m.BasicAuthentication(username="alice", password="s3cret"),
                    ),
                    retry_policy=m.RetryPolicy(
                        retry_type="Fixed", retry_interval=timedelta(seconds=30), retry_count=2
                    ),
                ),
                recurrence=m.JobRecurrence(
                    frequency="Month",
                    interval=1,
                    schedule=m.JobRecurrenceSchedule(
                        hours=[5],
                        minutes=[0],
                        month_days=[1, 15],
                        monthly_occurrences=[
                            m.JobRecurrenceScheduleMonthlyOccurrence(day="Friday", occurrence=1)
                        ],
                    ),
                ),
                state="Enabled",
            )
        )
        made = client.jobs.create_or_update(group, name, "monthly", job)
        assert made.name == f"{name}/monthly"
        auth = made.properties.action.request.authentication
        assert isinstance(auth, m.BasicAuthentication)
        assert auth.username == "alice" and auth.password is None  # never returned
        assert made.properties.action.retry_policy.retry_interval == timedelta(seconds=30)
        schedule = made.properties.recurrence.schedule
        assert schedule.month_days == [1, 15] and schedule.hours == [5]
        assert schedule.monthly_occurrences[0].day == "friday"
        assert schedule.monthly_occurrences[0].occurrence == 1
        assert made.properties.state == "enabled"
        upcoming = made.properties.status.next_execution_time
        assert upcoming > datetime.now(UTC) and (upcoming.hour, upcoming.minute) == (5, 0)
        assert upcoming.day in (1, 15) or (upcoming.weekday() == 4 and upcoming.day <= 7)
        got = client.jobs.get(group, name, "monthly")
        assert got.properties.status.execution_count == 0
        assert got.properties.status.last_execution_time is None
        assert got.properties.start_time == start

        # -- list with a state filter and paging ------------------------------------------------
        for extra, state in (("daily", "Enabled"), ("paused", "Disabled")):
            body = m.JobDefinition(
                properties=m.JobProperties(
                    action=m.JobAction(
                        type="Http", request=m.HttpRequest(uri=target.url, method="POST")
                    ),
                    recurrence=m.JobRecurrence(frequency="Day", interval=1),
                    start_time=datetime(2030, 1, 1, tzinfo=UTC),
                    state=state,
                )
            )
            client.jobs.create_or_update(group, name, extra, body)
        enabled = client.jobs.list(group, name, top=1, filter="state eq Enabled")
        pages = [[j.name for j in page] for page in enabled.by_page()]
        assert pages == [[f"{name}/daily"], [f"{name}/monthly"]]
        everything = [j.name.split("/")[1] for j in client.jobs.list(group, name, top=2)]
        assert everything == ["daily", "monthly", "paused"]
        paused = client.jobs.get(group, name, "paused")
        assert paused.properties.state == "disabled" and paused.properties.status is None

        # -- patch ------------------------------------------------------------------------------
        changed = client.jobs.patch(
            group,
            name,
            "monthly",
            m.JobDefinition(
                properties=m.JobProperties(
                    action=m.JobAction(request=m.HttpRequest(body="patched"))
                )
            ),
        )
        assert changed.properties.action.request.body == "patched"
        assert changed.properties.action.request.authentication.username == "alice"  # merged
        assert changed.properties.recurrence.frequency == "month"

        # -- run, and the history it leaves --------------------------------------------------------
        assert client.jobs.run(group, name, "monthly") is None
        call = wait_until(lambda: target.received, "the run's HTTP call")[0]
        assert call["body"] == "patched"
        assert call["authorization"] == "Basic " + base64.b64encode(b"alice:s3cret").decode()
        history = wait_until(
            lambda: list(client.jobs.list_job_history(group, name, "monthly")), "a history entry"
        )
        entry = history[0]
        assert entry.properties.action_name == m.JobHistoryActionName.MAIN_ACTION
        assert entry.properties.status is None  # Completed entries carry no status
        assert "Http Action" in entry.properties.message
        assert entry.name.startswith(f"{name}/monthly/")
        completed = list(
            client.jobs.list_job_history(group, name, "monthly", filter="status eq Completed")
        )
        assert [e.name for e in completed] == [entry.name]
        failed = list(
            client.jobs.list_job_history(group, name, "monthly", filter="status eq Failed")
        )
        assert failed == []
        status = wait_until(
            lambda: client.jobs.get(group, name, "monthly").properties.status.execution_count,
            "the status counters",
        )
        assert status == 1

        # -- delete -----------------------------------------------------------------------------
        client.jobs.delete(group, name, "monthly")
        with pytest.raises(ResourceNotFoundError):
            client.jobs.get(group, name, "monthly")
        client.job_collections.begin_delete(group, name).result()
        with pytest.raises(ResourceNotFoundError):
            client.job_collections.get(group, name)
        # Errors reach SDK users as ARM errors.
        with pytest.raises(HttpResponseError) as raised:
            client.jobs.create_or_update(group, "missing", "x", job)
        assert raised.value.status_code == 404
        assert raised.value.error is not None and raised.value.error.code == "ResourceNotFound"
    finally:
        client.close()
        target.close()


def test_a_job_created_through_the_api_runs_and_completes(engine_server: ServerProcess) -> None:
    """The API's scheduling fields drive the engine: a one-time job without startTime runs at
    once, leaves one Completed history entry, and is then Completed with its status filled."""
    target = Target()
    api = Api(engine_server)
    try:
        name = api.new_collection()
        body = http_job(target.url)
        body["properties"]["action"]["request"]["method"] = "POST"
        body["properties"]["action"]["request"]["body"] = "once"
        created = api.put(api.job(name, "once"), body).json()["properties"]
        assert "nextExecutionTime" in created["status"]
        wait_until(lambda: target.received, "the job's HTTP call")
        job = wait_until(
            lambda: (
                (j := api.get(api.job(name, "once")).json()["properties"])["state"] == "completed"
                and j
            ),
            "the job to complete",
        )
        assert target.received[0]["body"] == "once"
        status = job["status"]
        assert status["executionCount"] == 1 and status["failureCount"] == 0
        assert "lastExecutionTime" in status and "nextExecutionTime" not in status
        history = api.get(api.job(name, "once") + "/history").json()["value"]
        assert len(history) == 1
        assert history[0]["properties"]["repeatCount"] == 1
        assert "status" not in history[0]["properties"]  # Completed
    finally:
        api.http.close()
        target.close()


def test_the_sdk_reads_exponential_and_templated_jobs(engine_server: ServerProcess) -> None:
    """The SDK types retryType as a plain string and drops properties it does not know: it
    reads such a job, and its PATCH (a merge) keeps what it cannot see."""
    credential = KeyCredential(engine_server.token)
    subscription = str(uuid.uuid4())
    client = SchedulerManagementClient(
        credential,
        subscription,
        base_url=engine_server.base_url,
        authentication_policy=BearerOverHttp(credential),
    )
    api = Api(engine_server, subscription)
    try:
        group, name = "rg1", api.new_collection()
        body = http_job("http://127.0.0.1:9/{{jobName}}?tag={{executionTag}}")
        body["properties"]["startTime"] = "2030-01-01T00:00:00Z"
        action = body["properties"]["action"]
        action["templated"] = True
        action["retryPolicy"] = {
            "retryType": "Exponential",
            "retryInterval": "PT30S",
            "maxRetryInterval": "PT1H",
            "retryCount": 5,
        }
        assert api.put(api.job(name, "exp"), body).status_code == 201

        got = client.jobs.get(group, name, "exp")
        policy = got.properties.action.retry_policy
        assert policy.retry_type == "exponential"
        assert policy.retry_interval == timedelta(seconds=30) and policy.retry_count == 5
        assert got.properties.action.request.uri.endswith("/{{jobName}}?tag={{executionTag}}")
        assert [j.name for j in client.jobs.list(group, name)] == [f"{name}/exp"]

        patch = m.JobDefinition(
            properties=m.JobProperties(action=m.JobAction(request=m.HttpRequest(body="b")))
        )
        client.jobs.patch(group, name, "exp", patch)
        stored = api.get(api.job(name, "exp")).json()["properties"]["action"]
        assert stored["templated"] is True
        assert stored["retryPolicy"]["maxRetryInterval"] == "01:00:00"
        assert stored["request"]["body"] == "b"

        # An SDK user can ask for Exponential (the enum is only a hint to it).
        made = client.jobs.create_or_update(
            group,
            name,
            "sdk-exp",
            m.JobDefinition(
                properties=m.JobProperties(
                    start_time=datetime(2030, 1, 1, tzinfo=UTC),
                    action=m.JobAction(
                        type="Http",
                        request=m.HttpRequest(uri="http://127.0.0.1:9/", method="GET"),
                        retry_policy=m.RetryPolicy(
                            retry_type="Exponential", retry_interval=timedelta(minutes=1)
                        ),
                    ),
                )
            ),
        )
        assert made.properties.action.retry_policy.retry_type == "exponential"
    finally:
        client.close()
        api.http.close()
