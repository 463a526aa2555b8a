"""ServiceBusQueue and ServiceBusTopic actions: one AMQP 1.0 message per execution.

The connection URL and target address are templates (`settings.servicebus_url` with
`{namespace}`, `servicebus_queue_address` with `{queue}`, `servicebus_topic_address` with
`{topic}`), so a job reaches Azure Service Bus or any AMQP 1.0 broker. `transportType`
NetMessaging (a .NET-only protocol) is accepted and sent over AMQP like the rest.

Mapping (brokered property -> AMQP 1.0): messageId -> message-id (a new id when absent, as
.NET's BrokeredMessage does), correlationId -> correlation-id, contentType -> content-type,
label -> subject, to -> to, replyTo -> reply-to, sessionId -> group-id, replyToSessionId ->
reply-to-group-id, timeToLive -> ttl, scheduledEnqueueTimeUtc, partitionKey, viaPartitionKey ->
the x-opt-scheduled-enqueue-time, x-opt-partition-key, x-opt-via-partition-key annotations
(Service Bus's names). customMessageProperties and the six x-ms-* execution values become
application properties. The body is one data section: the message's UTF-8 bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from proton import Message, symbol, timestamp

from horarium.actions.amqp import AmqpSender, AmqpSendError, Endpoint
from horarium.actions.base import ActionResult, ExecutionContext
from horarium.actions.execution import execution_headers
from horarium.actions.fields import (
    ActionInputError,
    lenient_string_map,
    lenient_text,
    lookup,
    section,
)
from horarium.model.durations import read_duration

SCHEDULED_ENQUEUE_TIME = symbol("x-opt-scheduled-enqueue-time")
PARTITION_KEY = symbol("x-opt-partition-key")
VIA_PARTITION_KEY = symbol("x-opt-via-partition-key")
TRANSPORTS = ("notspecified", "netmessaging", "amqp")

# brokered property name -> proton.Message attribute
STRING_PROPERTIES = {
    "correlationId": "correlation_id",
    "contentType": "content_type",
    "label": "subject",
    "to": "address",
    "replyTo": "reply_to",
    "sessionId": "group_id",
    "replyToSessionId": "reply_to_group_id",
}


class ServiceBusActions:
    def __init__(
        self, sender: AmqpSender, url_template: str, queue_template: str, topic_template: str
    ) -> None:
        self._sender = sender
        self._url_template = url_template
        self._queue_template = queue_template
        self._topic_template = topic_template

    async def run(
        self, action: Mapping[str, Any], context: ExecutionContext, *, topic: bool
    ) -> ActionResult:
        where = "serviceBusTopicMessage" if topic else "serviceBusQueueMessage"
        prefix = "ServiceBusTopic Action" if topic else "ServiceBusQueue Action"
        body = section(action, where, "action")
        namespace = lenient_text(body, "namespace", where) or ""
        entity_field = "topicPath" if topic else "queueName"
        entity = lenient_text(body, entity_field, where) or ""
        auth = section(body, "authentication", where)
        user = lenient_text(auth, "sasKeyName", f"{where}.authentication") or ""
        key = lenient_text(auth, "sasKey", f"{where}.authentication") or ""
        transport = (lenient_text(body, "transportType", where, required=False) or "AMQP").lower()
        if transport not in TRANSPORTS:
            raise ActionInputError(f"'{where}.transportType' must be AMQP or NetMessaging")
        message, message_id = build_message(body, where, context)

        endpoint = Endpoint(
            _fill(self._url_template, "HORARIUM_SERVICEBUS_URL", namespace=namespace), user, key
        )
        if topic:
            address = _fill(self._topic_template, "HORARIUM_SERVICEBUS_TOPIC_ADDRESS", topic=entity)
        else:
            address = _fill(self._queue_template, "HORARIUM_SERVICEBUS_QUEUE_ADDRESS", queue=entity)
        kind = "topic" if topic else "queue"
        target = f"{kind} '{entity}' of namespace '{namespace}'"
        try:
            await self._sender.send(endpoint, address, message)
        except AmqpSendError as exc:
            return ActionResult(False, f"{prefix} - Sending to {target} failed: {exc}")
        return ActionResult(True, f"{prefix} - Message sent to {target}: message id '{message_id}'")


def time_to_live(value: str, field: str) -> timedelta:
    """`timeToLive` as TimeSpan or ISO 8601 (the model's reader); bad input names `field`."""
    try:
        return read_duration(value)
    except ValueError as exc:
        raise ActionInputError(
            f"'{field}' must be a TimeSpan such as 00:00:30 or an ISO 8601 duration such as PT30S"
        ) from exc


def build_message(
    body: Mapping[str, Any], where: str, context: ExecutionContext
) -> tuple[Message, str]:
    """The AMQP message for a serviceBus*Message object (see the module's mapping), its id."""
    message = Message()
    message.body = (lenient_text(body, "message", where, required=False) or "").encode()
    message.inferred = True  # bytes as a data section, not an amqp-value holding binary
    message.durable = True
    props_where = f"{where}.brokeredMessageProperties"
    props = section(body, "brokeredMessageProperties", where, required=False)
    message_id = lenient_text(props, "messageId", props_where, required=False) or uuid.uuid4().hex
    message.id = message_id
    for name, attribute in STRING_PROPERTIES.items():
        value = lenient_text(props, name, props_where, required=False)
        if value is not None:
            setattr(message, attribute, value)
    ttl = lenient_text(props, "timeToLive", props_where, required=False)
    if ttl is not None:
        span = time_to_live(ttl, f"{props_where}.timeToLive")
        if span.total_seconds() <= 0:
            raise ActionInputError(f"'{props_where}.timeToLive' must be positive")
        message.ttl = span.total_seconds()
    annotations: dict[str | int, Any] = {}  # symbol keys (symbol is a str)
    enqueue = lookup(props, "scheduledEnqueueTimeUtc")
    if enqueue is not None:
        annotations[SCHEDULED_ENQUEUE_TIME] = timestamp(
            int(_instant(enqueue, f"{props_where}.scheduledEnqueueTimeUtc").timestamp() * 1000)
        )
    for name, key in (("partitionKey", PARTITION_KEY), ("viaPartitionKey", VIA_PARTITION_KEY)):
        value = lenient_text(props, name, props_where, required=False)
        if value is not None:
            annotations[key] = value
    if annotations:
        message.annotations = annotations
    application = lenient_string_map(body, "customMessageProperties", where)
    application.update(execution_headers(context))
    message.properties = cast(Any, application)
    return message, message_id


def _instant(value: Any, field: str) -> datetime:
    if not isinstance(value, str):
        raise ActionInputError(f"'{field}' must be an ISO 8601 date-time string")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as exc:
        raise ActionInputError(f"'{field}' must be an ISO 8601 date-time") from exc
    if moment.tzinfo is None:  # the field is UTC by name
        moment = moment.replace(tzinfo=UTC)
    return moment


def _fill(template: str, setting: str, **values: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        names = ", ".join("{" + k + "}" for k in values)
        raise ActionInputError(f"setting {setting} may only use {names}: {exc}") from exc
