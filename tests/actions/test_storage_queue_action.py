"""StorageQueue actions against Azurite (npm), started on a free port by the fixture."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest

from horarium.actions.runner import Actions
from horarium.config import Settings
from tests.actions.action_context import make_context
from tests.queue_services import (
    ACCOUNT,
    forged,
    received,
    sas_for,
    start_azurite,
    storage_queue_action,
    storage_queue_url,
    throwaway_queue,
)
from tests.support import free_port

pytestmark = pytest.mark.azurite

queue_action = storage_queue_action


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The queue endpoint of a fresh in-memory Azurite, e.g. http://127.0.0.1:PORT/devstoreaccount1."""
    with start_azurite(tmp_path_factory.mktemp("azurite")) as endpoint:
        yield endpoint


@pytest.fixture
async def queue(azurite: str) -> AsyncIterator[str]:
    async with throwaway_queue(azurite) as name:
        yield name


def settings_for(azurite: str) -> Settings:
    return Settings(storage_queue_url=storage_queue_url(azurite))


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
    forged_sas = forged(good)
    read_only = sas_for(queue, read=True)
    async with Actions(settings_for(azurite)) as actions:
        bad_sig = await actions.run(queue_action(queue, forged_sas), make_context())
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


async def test_a_templated_message_is_filled_inside_the_envelope(azurite: str, queue: str) -> None:
    context = make_context(attempt=1, templated=True)
    message = "<run tag='{{executionTag}}' due='{{scheduledTime}}' try='{{attempt}}'/> & more"
    action = {**queue_action(queue, sas_for(queue), message), "templated": True}
    async with Actions(settings_for(azurite)) as actions:
        result = await actions.run(action, context)
        plain = await actions.run(queue_action(queue, sas_for(queue), message), make_context())
    assert result.succeeded and plain.succeeded, (result.message, plain.message)
    filled, as_written = (
        ET.fromstring(body).findtext("Message") for body in await received(azurite, queue)
    )
    # Inserted as they are; the envelope escapes the whole message (its reader unescapes).
    tag = context.execution_tag
    assert filled == f"<run tag='{tag}' due='2024-05-01T12:30:00Z' try='1'/> & more"
    assert as_written == message
