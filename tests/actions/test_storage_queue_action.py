"""StorageQueue actions against Azurite (npm), started on a free port by the fixture."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from action_context import make_context
from azure.storage.queue import QueueSasPermissions, TextBase64DecodePolicy, generate_queue_sas
from azure.storage.queue.aio import QueueClient, QueueServiceClient

from horarium.actions.runner import Actions
from horarium.config import Settings
from support import IN_CI, free_port, port_open

pytestmark = pytest.mark.azurite

ROOT = Path(__file__).resolve().parents[2]
AZURITE = ROOT / "node_modules" / ".bin" / "azurite-queue"
ACCOUNT = "devstoreaccount1"
# Azurite's published, well-known development key (not a secret).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The queue endpoint of a fresh in-memory Azurite, e.g. http://127.0.0.1:PORT/devstoreaccount1."""
    if not AZURITE.exists() or shutil.which("node") is None:
        reason = "Azurite is not installed (run scripts/services.sh: npm install)"
        if IN_CI:
            pytest.fail(f"{reason} (CI=true: it must run)")
        pytest.skip(reason)
    port = free_port()
    workdir = tmp_path_factory.mktemp("azurite")
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


@pytest.fixture
async def queue(azurite: str) -> AsyncIterator[str]:
    name = f"q{os.urandom(6).hex()}"
    async with QueueServiceClient(
        azurite, credential={"account_name": ACCOUNT, "account_key": KEY}
    ) as svc:
        await svc.create_queue(name)
        yield name
        await svc.delete_queue(name)


def settings_for(azurite: str) -> Settings:
    return Settings(storage_queue_url=azurite.replace(ACCOUNT, "{account}"))


def sas_for(queue: str, **permissions: bool) -> str:
    return generate_queue_sas(
        ACCOUNT,
        queue,
        KEY,
        permission=QueueSasPermissions(**(permissions or {"add": True})),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )


def queue_action(queue: str, sas: str, message: str = "membership") -> dict[str, Any]:
    return {
        "type": "StorageQueue",
        "queueMessage": {
            "storageAccount": ACCOUNT,
            "queueName": queue,
            "sasToken": sas,
            "message": message,
        },
    }


async def received(azurite: str, queue: str) -> list[str]:
    client = QueueClient(
        azurite,
        queue,
        credential={"account_name": ACCOUNT, "account_key": KEY},
        message_decode_policy=TextBase64DecodePolicy(),
    )
    async with client:
        return [m.content async for m in client.receive_messages(max_messages=32)]


async def test_message_arrives_in_the_live_envelope(azurite: str, queue: str) -> None:
    context = make_context(
        execution_tag="e927cf76d24da9625608248ce654cfa7",
        expected_time=datetime(2015, 9, 10, 0, 0, tzinfo=UTC),
    )
    sas = sas_for(queue)
    async with Actions(settings_for(azurite)) as actions:
        result = await actions.run(queue_action(queue, sas, "a <b> & c"), context)
    assert result.succeeded, result.message
    assert result.message.startswith(
        f"StorageQueue Action - Message sent to queue '{queue}' of storage account '{ACCOUNT}'"
    )
    assert sas not in result.message
    [body] = await received(azurite, queue)
    assert body.startswith('<?xml version="1.0" encoding="utf-16"?>\r\n<StorageQueueMessage ')
    root = ET.fromstring(body)  # as a string: the declaration says utf-16, as it did live
    assert root.tag == "StorageQueueMessage"
    assert {child.tag: child.text for child in root} == {
        "ExecutionTag": "e927cf76d24da9625608248ce654cfa7",
        "ClientRequestId": context.client_request_id,
        "ExpectedExecutionTime": "2015-09-10T00:00:00",
        "SchedulerJobId": "job-1",
        "SchedulerJobCollectionId": "coll-1",
        "Region": "West Europe",
        "Message": "a <b> & c",
    }


async def test_sas_token_with_leading_question_mark_works(azurite: str, queue: str) -> None:
    async with Actions(settings_for(azurite)) as actions:
        result = await actions.run(queue_action(queue, "?" + sas_for(queue)), make_context())
    assert result.succeeded, result.message
    assert len(await received(azurite, queue)) == 1


async def test_wrong_sas_token_fails_with_the_storage_error_code(azurite: str, queue: str) -> None:
    good = sas_for(queue)
    forged = good.replace("sig=", "sig=AAAA")
    read_only = sas_for(queue, read=True)
    async with Actions(settings_for(azurite)) as actions:
        bad_sig = await actions.run(queue_action(queue, forged), make_context())
        no_add = await actions.run(queue_action(queue, read_only), make_context())
    assert not bad_sig.succeeded
    assert "failed: AuthenticationFailed (403)" in bad_sig.message
    assert not no_add.succeeded
    assert "failed: AuthorizationPermissionMismatch (403)" in no_add.message
    for result in (bad_sig, no_add):
        assert "sig=" not in result.message
    assert await received(azurite, queue) == []


async def test_missing_queue_fails_with_queue_not_found(azurite: str) -> None:
    async with Actions(settings_for(azurite)) as actions:
        result = await actions.run(
            queue_action("nosuchqueue", sas_for("nosuchqueue")), make_context()
        )
    assert not result.succeeded
    assert result.message.startswith(
        "StorageQueue Action - Sending to queue 'nosuchqueue' of storage account "
        f"'{ACCOUNT}' failed: QueueNotFound (404)"
    )


async def test_unreachable_storage_fails() -> None:
    settings = Settings(storage_queue_url=f"http://127.0.0.1:{free_port()}/{{account}}")
    async with Actions(settings) as actions:
        result = await actions.run(queue_action("q", "sv=2020&sig=abc123"), make_context())
    assert not result.succeeded
    assert result.message.startswith(
        f"StorageQueue Action - Sending to queue 'q' of storage account '{ACCOUNT}' failed: "
    )
    assert "abc123" not in result.message


async def test_missing_fields_fail_naming_them() -> None:
    async with Actions(Settings()) as actions:
        result = await actions.run(
            {"type": "storagequeue", "queueMessage": {"storageAccount": "a", "sasToken": "x"}},
            make_context(),
        )
    assert (
        result.message
        == "StorageQueue Action - invalid action: 'queueMessage.queueName' is required"
    )
