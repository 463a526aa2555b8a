"""`/metrics` of a real `horarium serve` with its scheduler, after executions against an HTTP
target on 127.0.0.1: the counters and histograms carry their labels (action type, phase,
outcome, route template), never a job, collection or subscription name; reading them takes a
key that reaches every subscription, unless `--metrics-public`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from prometheus_client.samples import Sample

from tests.migrated_databases import migrated_pg_database
from tests.ops.ops_support import Jobs, Target, http_target, new_key, samples, value
from tests.server_process import ServerProcess, running_server
from tests.support import wait_until

JOB_ROUTE = (
    "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers"
    "/Microsoft.Scheduler/jobCollections/{jobCollectionName}/jobs/{jobName}"
)


@dataclass
class Ran:
    server: ServerProcess
    jobs: Jobs
    target: Target
    metrics: list[Sample]


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    """A server that ran a succeeding job, a failing one (no retries) and one that failed its
    first attempt and waits for its retry; then its metrics."""
    workdir: Path = tmp_path_factory.mktemp(f"metrics-{request.param}")
    with http_target() as target:
        if request.param == "postgres":
            with (
                migrated_pg_database() as url,
                running_server(workdir, database=url, engine=True) as server,
            ):
                yield _run(server, target)
        else:
            with running_server(workdir, engine=True) as server:
                yield _run(server, target)


def _run(server: ServerProcess, target: Target) -> Ran:
    jobs = Jobs(server)
    jobs.put("job-ok", f"{target.url}/ok")
    jobs.put("job-fails", f"{target.url}/fail")
    jobs.put(
        "job-retries",
        f"{target.url}/fail-then-retry",
        retry={"retryType": "Fixed", "retryInterval": "PT1H", "retryCount": 1},
    )
    for name in ("job-ok", "job-fails", "job-retries"):
        wait_until(lambda name=name: jobs.history(name), f"the history of {name}")

    def scraped() -> list[Sample] | None:
        answer = httpx.get(server.url("/metrics"), headers=server.auth_headers(), timeout=10)
        assert answer.status_code == 200, answer.text
        found = samples(answer.text)
        # History is written with the attempt; the counters follow at once in the same process.
        return found if value(found, "horarium_attempts_total") >= 3 else None

    return Ran(server, jobs, target, wait_until(scraped, "three attempts counted"))


def test_executions_and_attempts_are_counted_by_action_type_and_outcome(ran: Ran) -> None:
    m = ran.metrics
    assert value(m, "horarium_executions_total", action_type="Http", outcome="succeeded") >= 1
    assert value(m, "horarium_executions_total", action_type="Http", outcome="faulted") >= 1
    failed = value(m, "horarium_attempts_total", action_type="Http", phase="main", outcome="failed")
    assert failed >= 2
    assert value(m, "horarium_retries_total", action_type="Http", phase="main") >= 1
    # Series of action types that did not run exist, at zero.
    assert any(
        s.name == "horarium_executions_total" and s.labels["action_type"] == "StorageQueue"
        for s in m
    )


def test_start_lag_and_action_duration_are_histograms(ran: Ran) -> None:
    m = ran.metrics
    assert value(m, "horarium_start_lag_seconds_count") >= 3
    assert value(m, "horarium_start_lag_seconds_bucket", le="+Inf") >= 3
    assert (
        value(m, "horarium_action_duration_seconds_count", action_type="Http", outcome="succeeded")
        >= 1
    )
    assert (
        value(m, "horarium_action_duration_seconds_count", action_type="Http", outcome="failed")
        >= 2
    )
    assert value(m, "horarium_claim_seconds_count") >= 1
    assert value(m, "horarium_record_seconds_count") >= 1


def test_gauges_say_what_runs_and_what_waits(ran: Ran) -> None:
    names = {s.name for s in ran.metrics}
    assert {
        "horarium_executions_in_flight",
        "horarium_event_loop_lag_seconds",
        "horarium_due_backlog",
        "horarium_lease_takeovers_total",
        "horarium_postponed_total",
        "horarium_record_failures_total",
        "horarium_attempts_not_written_total",
    } <= names
    # The retry is an hour away: nothing is due.
    assert value(ran.metrics, "horarium_due_backlog") == 0
    # The server's scheduler beats: one node, database-wide.
    assert value(ran.metrics, "horarium_live_nodes") == 1


def test_api_requests_are_counted_by_route_template_never_by_name(ran: Ran) -> None:
    m = ran.metrics
    created = value(m, "horarium_http_requests_total", route=JOB_ROUTE, method="PUT", status="201")
    assert created >= 3
    assert value(m, "horarium_http_request_duration_seconds_count", route=JOB_ROUTE) >= 3
    names = {"job-ok", "job-fails", "job-retries", ran.jobs.subscription, ran.jobs.collection_name}
    for sample in m:
        for label in sample.labels.values():
            assert not any(name in label for name in names), sample


def test_metrics_need_a_token_that_reaches_every_subscription(ran: Ran) -> None:
    server = ran.server
    url = server.url("/metrics")
    refused = httpx.get(url, timeout=10)
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "AuthenticationFailed"
    one_subscription = new_key(server, ran.jobs.subscription)
    forbidden = httpx.get(url, headers={"Authorization": f"Bearer {one_subscription}"})
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "AuthorizationFailed"
    every = new_key(server, "*", role="reader")
    allowed = httpx.get(url, headers={"Authorization": f"Bearer {every}"}, timeout=10)
    assert allowed.status_code == 200
    assert allowed.headers["content-type"].startswith("text/plain")
    assert every not in server.log() and one_subscription not in server.log()


def test_metrics_public_needs_no_token_and_says_so_at_start(tmp_path: Path) -> None:
    with running_server(tmp_path, args=["--metrics-public"]) as server:
        answer = httpx.get(server.url("/metrics"), timeout=10)
        log = server.log()
    assert answer.status_code == 200
    assert "horarium_http_requests_total" in answer.text
    notices = [line for line in log.splitlines() if "--metrics-public" in line]
    assert len(notices) == 1 and notices[0].startswith("Warning: /metrics needs no token")
