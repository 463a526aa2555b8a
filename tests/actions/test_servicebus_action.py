"""ServiceBusQueue / ServiceBusTopic actions over AMQP 1.0, against RabbitMQ's AMQP 1.0 plugin.

The test declares throwaway queues (and the topic binding on amq.topic) with pika, with
x-expires so RabbitMQ removes them, and reads the messages back with Proton as an AMQP 1.0
receiver, so every section (properties, annotations, application properties, data) is seen as
sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from proton import symbol, timestamp

from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.actions.action_context import make_context
from tests.queue_services import (
    BROKER,
    KEY,
    KEY_NAME,
    QUEUE_ADDRESS,
    TOPIC_ADDRESS,
    declare,
    rabbit_channel,
    receive,
)
from tests.queue_services import servicebus_queue_action as queue_action
from tests.support import free_port

pytestmark = pytest.mark.rabbitmq

RABBIT = Settings(
    servicebus_url=BROKER,
    servicebus_queue_address=QUEUE_ADDRESS,
    servicebus_topic_address=TOPIC_ADDRESS,
    http_timeout=10,
)


@pytest.fixture(scope="module")
def channel() -> Iterator[Any]:
    with rabbit_channel() as channel:
        yield channel


async def test_queue_message_arrives_with_body_properties_and_application_properties(
    channel: Any,
) -> None:
    queue = declare(channel)
    context = make_context()
    action = queue_action(
        queue,
        message="héllo wörld",
        transportType="netMessaging",
        brokeredMessageProperties={
            "messageId": "msg-1",
            "correlationId": "corr-1",
            "contentType": "application/json",
            "label": "nightly",
            "to": "billing",
            "replyTo": "replies",
            "sessionId": "session-7",
            "replyToSessionId": "session-8",
            "timeToLive": "00:05:30",
            "scheduledEnqueueTimeUtc": "2030-01-02T03:04:05Z",
            "partitionKey": "p-1",
            "forcePersistence": True,
        },
        customMessageProperties={"tenant": "acme", "priority": "high"},
    )
    async with Actions(RABBIT) as actions:
        result = await actions.run(action, context)
    assert result.succeeded, result.message
    assert result.message == (
        f"ServiceBusQueue Action - Message sent to queue '{queue}' of namespace 'contoso-bus': "
        "message id 'msg-1'"
    )
    got = await receive(queue)
    assert bytes(got.body) == "héllo wörld".encode()  # one data section of UTF-8 bytes
    assert got.inferred
    assert (got.id, got.correlation_id, got.content_type) == ("msg-1", "corr-1", "application/json")
    assert (got.subject, got.address, got.reply_to) == ("nightly", "billing", "replies")
    assert (got.group_id, got.reply_to_group_id) == ("session-7", "session-8")
    assert got.ttl == 330.0
    assert got.durable
    assert got.annotations[symbol("x-opt-scheduled-enqueue-time")] == timestamp(1893553445000)
    assert got.annotations[symbol("x-opt-partition-key")] == "p-1"
    assert got.properties == {
        "tenant": "acme",
        "priority": "high",
        "x-ms-scheduler-jobid": "job-1",
        "x-ms-scheduler-jobcollectionid": "coll-1",
        "x-ms-scheduler-expected-execution-time": "2024-05-01T12:30:00",
        "x-ms-scheduler-execution-region": "West Europe",
        "x-ms-client-request-id": context.client_request_id,
        "x-ms-execution-tag": context.execution_tag,
    }


async def test_message_id_is_generated_and_iso_time_to_live_is_accepted(channel: Any) -> None:
    queue = declare(channel)
    action = queue_action(queue, brokeredMessageProperties={"timeToLive": "PT45S"})
    async with Actions(RABBIT) as actions:
        result = await actions.run(action, make_context())
    assert result.succeeded, result.message
    got = await receive(queue)
    assert got.ttl == 45.0
    assert isinstance(got.id, str) and len(got.id) == 32
    assert result.message.endswith(f"message id '{got.id}'")
    assert bytes(got.body) == b"hello queue"


async def test_topic_message_reaches_a_subscriber_bound_to_the_topic(channel: Any) -> None:
    topic = f"horarium.test.{uuid.uuid4().hex[:8]}"
    subscriber = declare(channel, topic=topic)
    action = {
        "type": "servicebustopic",
        "serviceBusTopicMessage": {
            "namespace": "contoso-bus",
            "topicPath": topic,
            "authentication": {"sasKeyName": KEY_NAME, "sasKey": KEY},
            "message": "to every subscriber",
            "customMessageProperties": {"kind": "broadcast"},
        },
    }
    async with Actions(RABBIT) as actions:
        result = await actions.run(action, make_context())
    assert result.succeeded, result.message
    assert result.message.startswith(
        f"ServiceBusTopic Action - Message sent to topic '{topic}' of namespace 'contoso-bus'"
    )
    got = await receive(subscriber)
    assert bytes(got.body) == b"to every subscriber"
    assert got.properties["kind"] == "broadcast"


async def test_wrong_credentials_fail_without_showing_the_key(channel: Any) -> None:
    queue = declare(channel)
    secret = "not-the-key-" + uuid.uuid4().hex
    action = queue_action(queue, authentication={"sasKeyName": KEY_NAME, "sasKey": secret})
    async with Actions(RABBIT) as actions:
        result = await actions.run(action, make_context())
    assert not result.succeeded
    assert result.message.startswith(
        f"ServiceBusQueue Action - Sending to queue '{queue}' of namespace 'contoso-bus' failed: "
        "could not connect: "
    )
    assert "amqp:unauthorized-access" in result.message
    assert secret not in result.message


async def test_a_refused_link_fails_and_the_next_send_still_works(channel: Any) -> None:
    queue = declare(channel)
    # With the address template "{queue}" the job's queueName is the whole AMQP address.
    settings = Settings(servicebus_url=BROKER, servicebus_queue_address="{queue}", http_timeout=1)
    async with Actions(settings) as actions:
        refused = await actions.run(queue_action("/no-such-node/x"), make_context())
        fine = await actions.run(queue_action(f"/amq/queue/{queue}"), make_context())
    assert not refused.succeeded
    # RabbitMQ 3.x never answers the attach of an unknown node; Service Bus says amqp:not-found.
    assert "failed: no answer within 1 seconds (" in refused.message
    assert fine.succeeded, fine.message
    assert bytes((await receive(queue)).body) == b"hello queue"


async def test_unreachable_broker_fails() -> None:
    port = free_port()
    settings = Settings(servicebus_url=f"amqp://127.0.0.1:{port}", http_timeout=5)
    async with Actions(settings) as actions:
        result = await actions.run(queue_action("q"), make_context())
    assert not result.succeeded
    assert "failed: could not connect:" in result.message


@contextlib.asynccontextmanager
async def dropping_proxy(target_port: int) -> AsyncIterator[tuple[int, list[asyncio.StreamWriter]]]:
    """A TCP relay to RabbitMQ whose open connections the test can cut, like a broker restart."""
    writers: list[asyncio.StreamWriter] = []

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        writers.extend([writer, up_writer])
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], writers
    finally:
        for writer in writers:
            writer.close()
        server.close()


async def test_pooled_connection_dropped_by_the_broker_is_replaced(channel: Any) -> None:
    queue = declare(channel)
    async with dropping_proxy(5672) as (port, connections):
        settings = Settings(
            servicebus_url=f"amqp://127.0.0.1:{port}",
            servicebus_queue_address="/amq/queue/{queue}",
            http_timeout=10,
        )
        async with Actions(settings) as actions:
            first = await actions.run(queue_action(queue, message="one"), make_context())
            for writer in connections:  # the broker "restarts": the pooled connection dies
                writer.transport.abort()
            second = await actions.run(queue_action(queue, message="two"), make_context())
    assert first.succeeded, first.message
    assert second.succeeded, second.message
    bodies = {bytes((await receive(queue)).body), bytes((await receive(queue)).body)}
    assert bodies == {b"one", b"two"}


async def test_bad_input_fails_naming_the_field() -> None:
    async with Actions(RABBIT) as actions:
        no_queue = await actions.run(
            {
                "type": "ServiceBusQueue",
                "serviceBusQueueMessage": {
                    "namespace": "ns",
                    "authentication": {"sasKeyName": "k", "sasKey": "v"},
                },
            },
            make_context(),
        )
        bad_ttl = await actions.run(
            queue_action("q", brokeredMessageProperties={"timeToLive": "soon"}), make_context()
        )
        no_auth = await actions.run(
            {
                "type": "ServiceBusTopic",
                "serviceBusTopicMessage": {"namespace": "n", "topicPath": "t"},
            },
            make_context(),
        )
    assert no_queue.message == (
        "ServiceBusQueue Action - invalid action: 'serviceBusQueueMessage.queueName' is required"
    )
    assert bad_ttl.message == (
        "ServiceBusQueue Action - invalid action: "
        "'serviceBusQueueMessage.brokeredMessageProperties.timeToLive' must be a TimeSpan such as "
        "00:00:30 or an ISO 8601 duration such as PT30S"
    )
    assert no_auth.message == (
        "ServiceBusTopic Action - invalid action: "
        "'serviceBusTopicMessage.authentication' is required"
    )


async def test_a_templated_message_is_json_escaped_for_a_json_content_type(channel: Any) -> None:
    queue = declare(channel)
    context = make_context(job_id=make_context().collection_id + '/jobs/say "hi"', templated=True)
    action = queue_action(
        queue,
        message='{"job": "{{jobName}}", "tag": "{{executionTag}}", "attempt": {{attempt}}}',
        brokeredMessageProperties={"contentType": "application/json"},
    )
    action["templated"] = True
    async with Actions(RABBIT) as actions:
        result = await actions.run(action, context)
    assert result.succeeded, result.message
    got = await receive(queue)
    assert json.loads(bytes(got.body)) == {
        "job": 'say "hi"',
        "tag": context.execution_tag,
        "attempt": 0,
    }
