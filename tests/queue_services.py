"""Azurite and RabbitMQ for the queue-action tests (tests/actions and tests/engine): starting or
reaching the service, throwaway queues, SAS tokens, job actions, reading messages back.

A uniquely named module (several conftest.py exist); each test module wraps these in its own
fixtures:

    @pytest.fixture(scope="module")
    def azurite(tmp_path_factory):
        with start_azurite(tmp_path_factory.mktemp("azurite")) as endpoint:
            yield endpoint
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pika
import pytest
from azure.storage.queue import QueueSasPermissions, TextBase64DecodePolicy, generate_queue_sas
from azure.storage.queue.aio import QueueClient, QueueServiceClient
from proton import Message
from proton.utils import BlockingConnection

from tests.support import IN_CI, free_port, port_open, require_service

ROOT = Path(__file__).resolve().parents[1]

# ---- Azurite (Storage queues) ----

AZURITE = ROOT / "node_modules" / ".bin" / "azurite-queue"
ACCOUNT = "devstoreaccount1"
# Azurite's published, well-known development key (not a secret).
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
_SHARED_KEY = {"account_name": ACCOUNT, "account_key": ACCOUNT_KEY}


@contextmanager
def start_azurite(workdir: Path) -> Iterator[str]:
    """A fresh in-memory Azurite on a free port; yields its queue endpoint,
    e.g. http://127.0.0.1:PORT/devstoreaccount1. Skips (fails under CI=true) if not installed."""
    if not AZURITE.exists() or shutil.which("node") is None:
        reason = "Azurite is not installed (run scripts/services.sh: npm install)"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: it must run)")
        pytest.skip(reason)
    port = free_port()
    process = subprocess.Popen(
        [
            str(AZURITE),
            "--queueHost", "127.0.0.1",
            "--queuePort", str(port),
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--disableTelemetry",
            "--silent",
        ],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not port_open("127.0.0.1", port, timeout=0.2):
            if process.poll() is not None or time.monotonic() > deadline:
                err = process.stderr.read().decode() if process.stderr else ""
                pytest.fail(f"Azurite did not start on port {port}: {err}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/{ACCOUNT}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def storage_queue_url(endpoint: str) -> str:
    """The `storage_queue_url` setting (HORARIUM_STORAGE_QUEUE_URL) for an Azurite endpoint."""
    return endpoint.replace(ACCOUNT, "{account}")


@asynccontextmanager
async def throwaway_queue(endpoint: str) -> AsyncIterator[str]:
    """A new, empty queue on Azurite; deleted afterwards."""
    name = f"q{os.urandom(6).hex()}"
    async with QueueServiceClient(endpoint, credential=_SHARED_KEY) as service:
        await service.create_queue(name)
        try:
            yield name
        finally:
            await service.delete_queue(name)


def sas_for(queue: str, **permissions: bool) -> str:
    """A SAS token for the queue (default: add only), valid for an hour."""
    return generate_queue_sas(
        ACCOUNT,
        queue,
        ACCOUNT_KEY,
        permission=QueueSasPermissions(**(permissions or {"add": True})),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )


def forged(sas: str) -> str:
    """The same SAS token with a signature Azurite will not accept."""
    return sas.replace("sig=", "sig=AAAA")


def storage_queue_action(queue: str, sas: str, message: str = "membership") -> dict[str, Any]:
    return {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": ACCOUNT,
            "queueName": queue,
            "sasToken": sas,
            "message": message,
        },
    }


async def received(endpoint: str, queue: str) -> list[str]:
    """The messages on the queue (Base64-decoded text), taken off it."""
    client = QueueClient(
        endpoint, queue, credential=_SHARED_KEY, message_decode_policy=TextBase64DecodePolicy()
    )
    async with client:
        return [m.content async for m in client.receive_messages(max_messages=32)]


# ---- RabbitMQ with AMQP 1.0 (Service Bus queues and topics) ----

BROKER = "amqp://127.0.0.1:5672"
QUEUE_ADDRESS = "/amq/queue/{queue}"
TOPIC_ADDRESS = "/topic/{topic}"
KEY_NAME, KEY = "guest", "guest"  # RabbitMQ's local-only default user stands in for a SAS key


def _amqp_connection() -> BlockingConnection:
    return BlockingConnection(
        BROKER, timeout=10, user=KEY_NAME, password=KEY, allowed_mechs="PLAIN", sasl_enabled=True
    )


@contextmanager
def rabbit_channel() -> Iterator[Any]:
    """A pika channel to RabbitMQ once AMQP 1.0 is known to work; skips (fails under CI=true)
    when RabbitMQ or its AMQP 1.0 plugin is missing."""
    require_service("RabbitMQ", "127.0.0.1", 5672)
    try:
        _amqp_connection().close()
    except Exception as exc:
        reason = f"RabbitMQ does not speak AMQP 1.0 (is rabbitmq_amqp1_0 enabled?): {exc}"
        if IN_CI:
            pytest.fail(reason)
        pytest.skip(reason)
    connection = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", 5672))
    try:
        yield connection.channel()
    finally:
        connection.close()


def declare(channel: Any, topic: str | None = None) -> str:
    """A throwaway queue (RabbitMQ removes it after a minute unused), bound to `topic` on
    amq.topic when given."""
    name = f"horarium-test-{uuid.uuid4().hex[:12]}"
    channel.queue_declare(name, arguments={"x-expires": 60_000})
    if topic is not None:
        channel.queue_bind(name, "amq.topic", routing_key=topic)
    return name


def waiting(channel: Any, queue: str) -> int:
    """How many messages the queue holds."""
    return int(channel.queue_declare(queue, passive=True).method.message_count)


def _receive_blocking(queue: str) -> Message:
    connection = _amqp_connection()
    try:
        receiver = connection.create_receiver(QUEUE_ADDRESS.format(queue=queue))
        message = receiver.receive(timeout=10)
        receiver.accept()
        return message
    finally:
        connection.close()


async def receive(queue: str) -> Message:
    """The next message on the queue, as an AMQP 1.0 receiver sees it (every section)."""
    return await asyncio.to_thread(_receive_blocking, queue)


def servicebus_queue_action(queue: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "namespace": "contoso-bus",
        "queueName": queue,
        "authentication": {"sasKeyName": KEY_NAME, "sasKey": KEY, "type": "SharedAccessKey"},
        "message": "hello queue",
    }
    body.update(fields)
    return {"type": "ServiceBusQueue", "serviceBusQueueMessage": body}
