"""StorageQueue actions: the XML envelope put on an Azure Storage queue with the job's SAS token.

The queue service URL is a template (`settings.storage_queue_url`, `{account}` filled in), so a
job reaches Azure or an emulator such as Azurite. Messages are Base64-encoded, as the .NET
storage client the live service used (and Azure Functions' queue trigger) expect. Requests go
through the runner's shared aiohttp session; the SDK's own retries are off (the engine retries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp
from azure.core.exceptions import AzureError, HttpResponseError
from azure.core.pipeline.transport import AioHttpTransport
from azure.storage.queue import TextBase64EncodePolicy
from azure.storage.queue.aio import QueueClient

from horarium.actions.base import ActionResult, ExecutionContext
from horarium.actions.envelope import storage_queue_envelope
from horarium.actions.fields import ActionInputError, lenient_text, section

PREFIX = "StorageQueue Action"


class StorageQueueActions:
    def __init__(self, session: aiohttp.ClientSession, url_template: str, timeout: float) -> None:
        self._session = session
        self._url_template = url_template
        self._timeout = timeout

    def account_url(self, account: str) -> str:
        try:
            return self._url_template.format(account=account)
        except (KeyError, IndexError, ValueError) as exc:
            raise ActionInputError(
                f"setting HORARIUM_STORAGE_QUEUE_URL must contain only {{account}}: {exc}"
            ) from exc

    async def run(self, action: Mapping[str, Any], context: ExecutionContext) -> ActionResult:
        where = "queueMessage"
        queue_message = section(action, "queueMessage", "action")
        account = lenient_text(queue_message, "storageAccount", where) or ""
        queue = lenient_text(queue_message, "queueName", where) or ""
        sas_token = (lenient_text(queue_message, "sasToken", where) or "").lstrip("?")
        message = lenient_text(queue_message, "message", where, required=False) or ""
        target = f"queue '{queue}' of storage account '{account}'"

        transport = AioHttpTransport(session=self._session, session_owner=False)
        try:
            client = QueueClient(
                self.account_url(account),
                queue,
                credential=sas_token,
                transport=transport,
                message_encode_policy=TextBase64EncodePolicy(),
                retry_total=0,
                connection_timeout=self._timeout,
                read_timeout=self._timeout,
            )
        except ValueError as exc:
            raise ActionInputError(f"'{where}' does not make a queue URL: {exc}") from exc
        try:
            async with client:
                sent = await client.send_message(storage_queue_envelope(context, message))
        except HttpResponseError as exc:
            error_code = getattr(exc, "error_code", None)  # the SDK's StorageErrorCode enum
            code = str(getattr(error_code, "value", error_code) or "Error")
            detail = _first_line(exc.message or exc.reason or "")
            return ActionResult(
                False,
                f"{PREFIX} - Sending to {target} failed: {code} ({exc.status_code}) {detail}",
            )
        except AzureError as exc:
            return ActionResult(
                False, f"{PREFIX} - Sending to {target} failed: {_first_line(str(exc))}"
            )
        return ActionResult(True, f"{PREFIX} - Message sent to {target}: message id '{sent.id}'")


def _first_line(value: str) -> str:
    return value.strip().splitlines()[0] if value.strip() else ""
