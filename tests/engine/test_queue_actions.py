"""Queue actions through the execution engine, against real brokers: StorageQueue on Azurite
(started by the test on a free port, SAS tokens generated here), ServiceBusQueue/Topic on
RabbitMQ with its AMQP 1.0 plugin. What a user notices: the message arrives as sent, wrong
credentials fail and are retried, a StorageQueue error action follows a failed HTTP action,
history and status tell the truth, and no SAS token or key shows up in history or responses.

The engine tests use the injected clock (`Scheduler.drain()` runs what is due) on SQLite and
PostgreSQL. The last two are REAL-TIME tests through a `horarium serve` process (about 2 s and
6 s: one-time jobs that run at once with retryType None; RabbitMQ answers a refused login only
after 3 s). The whole module takes about 30 s.
"""

from __future__ import annotations

import asyncio
import uuid
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from horarium.actions.runner import Actions
from horarium.config import Settings
from horarium.engine.scheduler import Scheduler
from horarium.store.core.schema import job_collections
from horarium.store.resources import jobs as jobs_sql
from tests.engine.engine_support import T0, FakeClock, Sink, Store, http
from tests.queue_services import (
    ACCOUNT,
    BROKER,
    KEY,
    KEY_NAME,
    QUEUE_ADDRESS,
    TOPIC_ADDRESS,
    declare,
    forged,
    rabbit_channel,
    receive,
    received,
    sas_for,
    servicebus_queue_action,
    start_azurite,
    storage_queue_action,
    storage_queue_url,
    throwaway_queue,
    waiting,
)
from tests.server_process import ServerProcess


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with start_azurite(tmp_path_factory.mktemp("azurite")) as endpoint:
        yield endpoint


@pytest.fixture
async def queue(azurite: str) -> AsyncIterator[str]:
    async with throwaway_queue(azurite) as name:
        yield name


@pytest.fixture(scope="module")
def channel() -> Iterator[Any]:
    with rabbit_channel() as channel:
        yield channel


@pytest.fixture
async def actions(request: pytest.FixtureRequest) -> AsyncIterator[Actions]:
    """The real action runner, its Storage queue URL on this module's Azurite (when the test
    uses it) and its Service Bus settings on RabbitMQ."""
    storage = Settings().storage_queue_url
    if "azurite" in request.fixturenames:
        storage = storage_queue_url(request.getfixturevalue("azurite"))
    settings = Settings(
        storage_queue_url=storage,
        servicebus_url=BROKER,
        servicebus_queue_address=QUEUE_ADDRESS,
        servicebus_topic_address=TOPIC_ADDRESS,
        http_timeout=10,
        region="Test Region",
    )
    async with Actions(settings) as runner:
        yield runner


def envelope(body: str) -> dict[str, str | None]:
    """The elements of a StorageQueueMessage envelope (parsed as a string: it says utf-16)."""
    root = ET.fromstring(body)
    assert root.tag == "StorageQueueMessage"
    return {child.tag: child.text for child in root}


def assert_no_secret(texts: list[str], *secrets: str) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text, f"a secret shows in {text!r}"


# ---- StorageQueue (Azurite) ----


@pytest.mark.azurite
async def test_storage_queue_job_delivers_each_execution_in_the_live_envelope(
    store: Store, azurite: str, queue: str, clock: FakeClock, make_scheduler: Any
) -> None:
    sas = sas_for(queue)
    job = await store.add(
        "nightly-queue",
        {
            "action": storage_queue_action(queue, sas, "rebuild <index> & notify"),
            "recurrence": {"frequency": "Minute", "interval": 1, "count": 2},
        },
    )
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1
    [first] = await received(azurite, queue)
    clock.advance(minutes=1)
    assert await scheduler.drain() == 1
    [second] = await received(azurite, queue)

    entries = list(reversed(await store.history(job)))
    assert [(e.action_name, e.status, e.repeat_count) for e in entries] == [
        ("MainAction", "Completed", 1),
        ("MainAction", "Completed", 2),
    ]
    for body, entry, expected in zip(
        (first, second), entries, ("2030-01-07T09:00:00", "2030-01-07T09:01:00"), strict=True
    ):
        assert body.startswith('<?xml version="1.0" encoding="utf-16"?>\r\n<StorageQueueMessage ')
        fields = envelope(body)
        assert fields["ExecutionTag"] == entry.execution_tag
        assert uuid.UUID(str(fields["ClientRequestId"]))
        assert fields == {
            "ExecutionTag": entry.execution_tag,
            "ClientRequestId": fields["ClientRequestId"],
            "ExpectedExecutionTime": expected,
            "SchedulerJobId": "nightly-queue",
            "SchedulerJobCollectionId": "coll",
            "Region": "Test Region",
            "Message": "rebuild <index> & notify",
        }
        assert entry.message.startswith(
            f"StorageQueue Action - Message sent to queue '{queue}' of storage account "
            f"'{ACCOUNT}': message id '"
        )
    assert envelope(first)["ExecutionTag"] != envelope(second)["ExecutionTag"]
    assert_no_secret([e.message for e in entries], sas, "sig=")
    row = await store.job(job)
    assert row.state == "Completed"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (2, 0, 0)
    assert row.last_execution_at == T0 + timedelta(minutes=1)
    assert row.next_execution_at is None


@pytest.mark.azurite
async def test_wrong_sas_token_fails_every_retry_and_nothing_is_queued(
    store: Store, azurite: str, queue: str, clock: FakeClock, make_scheduler: Any
) -> None:
    sas = forged(sas_for(queue))
    signature = sas.split("sig=", 1)[1].split("&", 1)[0]
    policy = {"retryType": "Fixed", "retryInterval": "00:00:20", "retryCount": 2}
    job = await store.add(
        "bad-sas", {"action": {**storage_queue_action(queue, sas), "retryPolicy": policy}}
    )
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1
    clock.advance(seconds=19)
    assert await scheduler.drain() == 0  # the retry waits its interval
    clock.advance(seconds=1)
    assert await scheduler.drain() == 1
    clock.advance(seconds=20)
    assert await scheduler.drain() == 1
    clock.advance(minutes=5)
    assert await scheduler.drain() == 0  # retries used up

    entries = list(reversed(await store.history(job)))
    assert [(e.action_name, e.status, e.retry_count) for e in entries] == [
        ("MainAction", "Failed", 0),
        ("MainAction", "Failed", 1),
        ("MainAction", "Failed", 2),
    ]
    assert len({e.execution_tag for e in entries}) == 1  # one execution, retried
    for entry in entries:
        assert entry.message.startswith(
            f"StorageQueue Action - Sending to queue '{queue}' of storage account '{ACCOUNT}' "
            "failed: AuthenticationFailed (403)"
        ), entry.message
    assert_no_secret([e.message for e in entries], sas, signature, "sig=")
    row = await store.job(job)
    assert row.state == "Faulted"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (3, 3, 1)
    assert await received(azurite, queue) == []


@pytest.mark.azurite
async def test_sas_token_fixed_between_retries_delivers_and_the_job_completes(
    store: Store, azurite: str, queue: str, clock: FakeClock, make_scheduler: Any
) -> None:
    """The user corrects the SAS token (a PATCH of the action) while a retry is pending: the
    retry runs the corrected definition, delivers, and the one-time job ends Completed."""
    good = sas_for(queue)
    policy = {"retryType": "Fixed", "retryInterval": "00:00:30", "retryCount": 3}
    properties = {"action": {**storage_queue_action(queue, forged(good)), "retryPolicy": policy}}
    job = await store.add("fixed-sas", properties)
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1
    clock.advance(seconds=10)
    corrected = {"action": {**storage_queue_action(queue, good), "retryPolicy": policy}}
    async with store.db.begin() as conn:  # what PATCH …/jobs/fixed-sas does for an action change
        await jobs_sql.update_one(conn, job, clock.now(), definition=corrected)
    clock.advance(seconds=20)
    assert await scheduler.drain() == 1

    [body] = await received(azurite, queue)
    completed, failed = await store.history(job)
    assert (failed.status, failed.retry_count) == ("Failed", 0)
    assert (completed.status, completed.retry_count) == ("Completed", 1)
    assert envelope(body)["ExecutionTag"] == failed.execution_tag == completed.execution_tag
    row = await store.job(job)
    assert (row.execution_count, row.failure_count, row.faulted_count) == (2, 1, 0)
    assert row.state == "Completed"
    assert row.ended_at == T0 + timedelta(seconds=30)
    assert row.next_execution_at is None
    assert await store.pending(job) == []


@pytest.mark.azurite
async def test_editing_the_job_while_its_execution_runs_does_not_run_it_twice(
    store: Store, sink: Sink, queue: str, clock: FakeClock, make_scheduler: Any
) -> None:
    """The user fixes the error action's SAS token (a PATCH that keeps the schedule) while the
    one-time job's HTTP action is in flight: that execution is the job's only one."""
    sink.delay = 0.3
    fallback = storage_queue_action(queue, forged(sas_for(queue)))
    job = await store.add("edited", {"action": http(sink.to("/slow"), errorAction=fallback)})
    scheduler: Scheduler = make_scheduler()

    running = asyncio.create_task(scheduler.drain())
    await sink.wait_hits(1)
    fixed = storage_queue_action(queue, sas_for(queue))
    corrected = {"action": http(sink.to("/slow"), errorAction=fixed)}
    async with store.db.begin() as conn:  # what PATCH …/jobs/edited does for an action change
        await jobs_sql.update_one(conn, job, clock.now(), definition=corrected)
    await running
    clock.advance(minutes=5)
    await scheduler.drain()

    assert len(sink.on("/slow")) == 1
    [entry] = await store.history(job)
    assert (entry.action_name, entry.status) == ("MainAction", "Completed")
    row = await store.job(job)
    assert (row.state, row.execution_count, row.next_execution_at) == ("Completed", 1, None)
    assert row.ended_at == T0


@pytest.mark.azurite
async def test_a_new_schedule_set_between_retries_is_not_ended_by_the_old_execution(
    store: Store, azurite: str, queue: str, clock: FakeClock, make_scheduler: Any
) -> None:
    """A write that restarts the series (new startTime) while a retry is pending, in a disabled
    collection (so nothing is scheduled yet): the retry waits for the collection, and then the
    old execution's retry must not end the job."""
    good = sas_for(queue)
    policy = {"retryType": "Fixed", "retryInterval": "00:00:30", "retryCount": 3}
    properties = {"action": {**storage_queue_action(queue, forged(good)), "retryPolicy": policy}}
    job = await store.add("rescheduled", properties)
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1
    clock.advance(seconds=10)
    later = {**properties, "startTime": (T0 + timedelta(days=1)).isoformat()}
    later["action"] = {**storage_queue_action(queue, good), "retryPolicy": policy}
    async with store.db.begin() as conn:  # PATCH startTime while the collection is disabled
        await conn.execute(update(job_collections).values(state="Disabled"))
        await jobs_sql.update_one(
            conn, job, clock.now(), definition=later, schedule_set_at=clock.now()
        )
    clock.advance(seconds=20)
    assert await scheduler.drain() == 0  # a Disabled collection runs nothing of its jobs
    async with store.db.begin() as conn:  # enabled again, its jobs' schedules left as they are
        await conn.execute(update(job_collections).values(state="Enabled"))
    assert await scheduler.drain() == 1

    assert len(await received(azurite, queue)) == 1  # the pending retry ran, corrected
    row = await store.job(job)
    assert (row.state, row.ended_at) == ("Enabled", None)  # the new series is still to come


@pytest.mark.azurite
async def test_storage_queue_error_action_runs_after_the_http_action_fails(
    store: Store, sink: Sink, azurite: str, queue: str, clock: FakeClock, make_scheduler: Any
) -> None:
    sas = sas_for(queue)
    main = sink.plan("/orders", 500)
    job = await store.add(
        "orders",
        {
            "action": http(
                main,
                retryPolicy={"retryType": "None"},
                errorAction=storage_queue_action(queue, sas, "orders endpoint is down"),
            )
        },
    )
    scheduler: Scheduler = make_scheduler()

    await scheduler.drain()  # the main action fails; the error action follows at once

    [hit] = sink.on("/orders")
    [body] = await received(azurite, queue)
    error, failed = await store.history(job)
    assert (failed.action_name, failed.status, failed.retry_count) == ("MainAction", "Failed", 0)
    assert "'InternalServerError'" in failed.message
    assert (error.action_name, error.status, error.retry_count) == ("ErrorAction", "Completed", 0)
    assert error.message.startswith(
        f"StorageQueue Action - Message sent to queue '{queue}' of storage account '{ACCOUNT}'"
    )
    fields = envelope(body)
    # The error action belongs to the same execution: same tag, a new client request id.
    assert fields["ExecutionTag"] == failed.execution_tag == hit.headers["x-ms-execution-tag"]
    assert fields["ClientRequestId"] != hit.headers["x-ms-client-request-id"]
    assert (fields["SchedulerJobId"], fields["Message"]) == ("orders", "orders endpoint is down")
    assert fields["ExpectedExecutionTime"] == "2030-01-07T09:00:00"
    assert_no_secret([failed.message, error.message], sas, "sig=")
    row = await store.job(job)
    # The main action failed its only attempt: the execution faulted, the error action's
    # success notwithstanding (the spec's faultedCount).
    assert row.state == "Faulted"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (2, 1, 1)


# ---- ServiceBusQueue / ServiceBusTopic (RabbitMQ, AMQP 1.0) ----


@pytest.mark.rabbitmq
async def test_servicebus_queue_job_delivers_body_and_properties(
    store: Store, channel: Any, make_scheduler: Any
) -> None:
    queue = declare(channel)
    job = await store.add(
        "billing",
        {
            "action": servicebus_queue_action(
                queue,
                message='{"invoice": 42}',
                brokeredMessageProperties={
                    "messageId": "invoice-42",
                    "correlationId": "corr-7",
                    "contentType": "application/json",
                    "label": "invoice",
                    "timeToLive": "00:10:00",
                },
                customMessageProperties={"tenant": "acme", "priority": "high"},
            )
        },
    )
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1

    got = await receive(queue)
    [entry] = await store.history(job)
    assert (entry.action_name, entry.status) == ("MainAction", "Completed")
    assert entry.message == (
        f"ServiceBusQueue Action - Message sent to queue '{queue}' of namespace 'contoso-bus': "
        "message id 'invoice-42'"
    )
    assert bytes(got.body) == b'{"invoice": 42}'
    assert (got.id, got.correlation_id, got.content_type, got.subject) == (
        "invoice-42",
        "corr-7",
        "application/json",
        "invoice",
    )
    assert got.ttl == 600.0
    assert got.properties == {
        "tenant": "acme",
        "priority": "high",
        "x-ms-scheduler-jobid": "billing",
        "x-ms-scheduler-jobcollectionid": "coll",
        "x-ms-scheduler-expected-execution-time": "2030-01-07T09:00:00",
        "x-ms-scheduler-execution-region": "Test Region",
        "x-ms-client-request-id": got.properties["x-ms-client-request-id"],
        "x-ms-execution-tag": entry.execution_tag,
    }
    assert uuid.UUID(got.properties["x-ms-client-request-id"])
    row = await store.job(job)
    assert row.state == "Completed"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (1, 0, 0)


@pytest.mark.rabbitmq
async def test_servicebus_topic_job_reaches_the_subscriber(
    store: Store, channel: Any, make_scheduler: Any
) -> None:
    topic = f"horarium.test.{uuid.uuid4().hex[:8]}"
    subscriber = declare(channel, topic=topic)
    job = await store.add(
        "broadcast",
        {
            "action": {
                "type": "ServiceBusTopic",
                "serviceBusTopicMessage": {
                    "namespace": "contoso-bus",
                    "topicPath": topic,
                    "authentication": {"sasKeyName": KEY_NAME, "sasKey": KEY},
                    "message": "to every subscriber",
                    "brokeredMessageProperties": {"messageId": "b-1", "label": "news"},
                    "customMessageProperties": {"kind": "broadcast"},
                },
            }
        },
    )
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1

    got = await receive(subscriber)
    [entry] = await store.history(job)
    assert (entry.action_name, entry.status) == ("MainAction", "Completed")
    assert entry.message == (
        f"ServiceBusTopic Action - Message sent to topic '{topic}' of namespace 'contoso-bus': "
        "message id 'b-1'"
    )
    assert bytes(got.body) == b"to every subscriber"
    assert (got.id, got.subject) == ("b-1", "news")
    assert got.properties["kind"] == "broadcast"
    assert got.properties["x-ms-scheduler-jobid"] == "broadcast"
    assert got.properties["x-ms-execution-tag"] == entry.execution_tag
    assert (await store.job(job)).state == "Completed"


@pytest.mark.rabbitmq
async def test_servicebus_wrong_key_fails_every_retry_without_showing_it(
    store: Store, channel: Any, clock: FakeClock, make_scheduler: Any
) -> None:
    queue = declare(channel)
    secret = "not-the-key-" + uuid.uuid4().hex
    # retryCount 1: RabbitMQ answers every refused login only after 3 s.
    policy = {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}
    action = servicebus_queue_action(
        queue, authentication={"type": "SharedAccessKey", "sasKeyName": KEY_NAME, "sasKey": secret}
    )
    job = await store.add("locked-out", {"action": {**action, "retryPolicy": policy}})
    scheduler: Scheduler = make_scheduler()

    assert await scheduler.drain() == 1
    clock.advance(seconds=14)
    assert await scheduler.drain() == 0  # the retry waits its interval
    clock.advance(seconds=1)
    assert await scheduler.drain() == 1
    clock.advance(minutes=5)
    assert await scheduler.drain() == 0  # retries used up

    entries = list(reversed(await store.history(job)))
    assert [(e.action_name, e.status, e.retry_count) for e in entries] == [
        ("MainAction", "Failed", 0),
        ("MainAction", "Failed", 1),
    ]
    assert len({e.execution_tag for e in entries}) == 1  # one execution, retried
    for entry in entries:
        assert entry.message.startswith(
            f"ServiceBusQueue Action - Sending to queue '{queue}' of namespace 'contoso-bus' "
            "failed: could not connect: "
        ), entry.message
        assert "amqp:unauthorized-access" in entry.message
    assert_no_secret([e.message for e in entries], secret)
    row = await store.job(job)
    assert row.state == "Faulted"
    assert (row.execution_count, row.failure_count, row.faulted_count) == (2, 2, 1)
    assert waiting(channel, queue) == 0


# ---- End to end, in real time, through `horarium serve` ----

API_VERSION = "2016-03-01"
COLLECTION = (
    "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Scheduler/jobCollections/queues"
)


async def poll(check: Any, what: str) -> Any:
    """Await `check()` until it is truthy; returns its value. The bound (30 s) only stops a hung
    test; it never decides the outcome of a healthy run."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        value = await check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.2)


@asynccontextmanager
async def serving(workdir: Path, env: dict[str, str]) -> AsyncIterator[httpx.AsyncClient]:
    """A `horarium serve` process with its scheduler (SQLite), and an API client holding a
    Standard collection."""
    server = ServerProcess(workdir, database=None, engine=True, env=env, args=[])
    await asyncio.to_thread(server.start)
    try:
        async with httpx.AsyncClient(
            base_url=server.base_url,
            params={"api-version": API_VERSION},
            timeout=30,
            headers=server.auth_headers(),
        ) as api:
            body = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
            made = await api.put(COLLECTION, json=body)
            assert made.status_code in (200, 201), made.text
            yield api
    finally:
        await asyncio.to_thread(server.stop)


async def put_job(api: httpx.AsyncClient, name: str, action: dict[str, Any]) -> None:
    """A one-time job without a start time: it runs at once."""
    response = await api.put(f"{COLLECTION}/jobs/{name}", json={"properties": {"action": action}})
    assert response.status_code in (200, 201), response.text


async def both_entries(api: httpx.AsyncClient, name: str) -> tuple[list[dict[str, Any]], str]:
    """The job's two history entries (newest first) once both are recorded, and the raw text."""

    async def history() -> tuple[list[dict[str, Any]], str] | None:
        response = await api.get(f"{COLLECTION}/jobs/{name}/history")
        assert response.status_code == 200, response.text
        entries = [e["properties"] for e in response.json()["value"]]
        return (entries, response.text) if len(entries) == 2 else None

    result: tuple[list[dict[str, Any]], str] = await poll(history, f"{name}'s two history entries")
    return result


async def job_resource(api: httpx.AsyncClient, name: str) -> tuple[dict[str, Any], str]:
    response = await api.get(f"{COLLECTION}/jobs/{name}")
    assert response.status_code == 200, response.text
    return response.json()["properties"], response.text


@pytest.mark.azurite
async def test_realtime_serve_sends_the_error_action_to_azurite_and_hides_the_sas(
    tmp_path: Path, sink: Sink, azurite: str, queue: str
) -> None:
    """REAL TIME (about 2 s): the HTTP action fails, the StorageQueue error action delivers."""
    sas = sas_for(queue)
    signature = sas.split("sig=", 1)[1].split("&", 1)[0]
    env = {"HORARIUM_STORAGE_QUEUE_URL": storage_queue_url(azurite)}
    async with serving(tmp_path, env) as api:
        action = {
            "type": "Http",
            "request": {"uri": sink.plan("/reports", 500), "method": "POST", "body": "daily"},
            "retryPolicy": {"retryType": "None"},
            "errorAction": storage_queue_action(queue, sas, "reports failed"),
        }
        await put_job(api, "reports", action)

        async def message() -> list[str]:
            return await received(azurite, queue)

        [body] = await poll(message, "the error action's message on Azurite")
        (error, failed), history_text = await both_entries(api, "reports")
        job, job_text = await job_resource(api, "reports")

    assert (failed["actionName"], failed["status"]) == ("MainAction", "Failed")
    assert "'InternalServerError'" in failed["message"]
    assert error["actionName"] == "ErrorAction"
    assert "status" not in error  # Completed entries carry no status, as on the live service
    assert error["message"].startswith(
        f"StorageQueue Action - Message sent to queue '{queue}' of storage account '{ACCOUNT}'"
    )
    fields = envelope(body)
    assert (fields["SchedulerJobId"], fields["SchedulerJobCollectionId"]) == ("reports", "queues")
    assert fields["Message"] == "reports failed"
    assert len(sink.on("/reports")) == 1
    queue_message = job["action"]["errorAction"]["queueMessage"]
    assert queue_message["queueName"] == queue
    assert "sastoken" not in job_text.lower()
    assert job["state"].lower() == "faulted"  # its main action faulted the execution
    status = job["status"]
    assert (status["executionCount"], status["failureCount"], status["faultedCount"]) == (2, 1, 1)
    assert_no_secret([job_text, history_text], sas, signature, "sig=")


@pytest.mark.rabbitmq
async def test_realtime_serve_servicebus_wrong_key_falls_back_and_hides_the_keys(
    tmp_path: Path, channel: Any
) -> None:
    """REAL TIME (about 5 s, RabbitMQ answers a refused login after 3 s): the ServiceBusQueue
    action with a wrong key fails; its ServiceBusQueue error action, with the right key, sends."""
    main_queue, fallback_queue = declare(channel), declare(channel)
    wrong = "not-the-key-" + uuid.uuid4().hex
    env = {
        "HORARIUM_SERVICEBUS_URL": BROKER,
        "HORARIUM_SERVICEBUS_QUEUE_ADDRESS": QUEUE_ADDRESS,
        "HORARIUM_SERVICEBUS_TOPIC_ADDRESS": TOPIC_ADDRESS,
    }
    async with serving(tmp_path, env) as api:
        action = {
            **servicebus_queue_action(
                main_queue,
                authentication={"type": "SharedAccessKey", "sasKeyName": KEY_NAME, "sasKey": wrong},
            ),
            "retryPolicy": {"retryType": "None"},
            "errorAction": servicebus_queue_action(fallback_queue, message="main queue refused"),
        }
        await put_job(api, "bus", action)

        async def arrived() -> bool:
            return await asyncio.to_thread(waiting, channel, fallback_queue) > 0

        await poll(arrived, "the error action's message on RabbitMQ")
        got = await receive(fallback_queue)
        (error, failed), history_text = await both_entries(api, "bus")
        job, job_text = await job_resource(api, "bus")

    assert bytes(got.body) == b"main queue refused"
    assert got.properties["x-ms-scheduler-jobid"] == "bus"
    assert (failed["actionName"], failed["status"]) == ("MainAction", "Failed")
    assert "amqp:unauthorized-access" in failed["message"]
    assert error["actionName"] == "ErrorAction" and "status" not in error
    assert error["message"].startswith(
        f"ServiceBusQueue Action - Message sent to queue '{fallback_queue}' of namespace "
        "'contoso-bus'"
    )
    assert waiting(channel, main_queue) == 0
    for part in (job["action"], job["action"]["errorAction"]):
        authentication = part["serviceBusQueueMessage"]["authentication"]
        assert authentication["sasKeyName"] == KEY_NAME
        assert "sasKey" not in authentication
    assert 'saskey"' not in job_text.lower()
    assert_no_secret([job_text, history_text], wrong)
