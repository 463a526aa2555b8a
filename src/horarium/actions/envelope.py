"""The Storage-queue message body: the live service's XML envelope around `message`.

The live service wrote what .NET's XmlSerializer makes of its StorageQueueMessage class (seen in
public code and a 2014 blog post): the "utf-16" declaration (it serialized to a .NET string),
two-space indentation, CRLF line ends, bare job and collection names, the expected time in UTC
without an offset, and `<Message />` for an empty message.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from horarium.actions.base import ExecutionContext
from horarium.actions.execution import bare_name, wire_time

HEAD = (
    '<?xml version="1.0" encoding="utf-16"?>\r\n'
    '<StorageQueueMessage xmlns:xsd="http://www.w3.org/2001/XMLSchema" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\r\n'
)


def _element(name: str, value: str) -> str:
    if value == "":
        return f"  <{name} />\r\n"
    return f"  <{name}>{escape(value)}</{name}>\r\n"


def storage_queue_envelope(context: ExecutionContext, message: str) -> str:
    fields = (
        ("ExecutionTag", context.execution_tag),
        ("ClientRequestId", context.client_request_id),
        ("ExpectedExecutionTime", wire_time(context.expected_time)),
        ("SchedulerJobId", bare_name(context.job_id)),
        ("SchedulerJobCollectionId", bare_name(context.collection_id)),
        ("Region", context.region),
        ("Message", message),
    )
    return HEAD + "".join(_element(n, v) for n, v in fields) + "</StorageQueueMessage>"
