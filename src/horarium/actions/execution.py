"""How the execution context is written on the wire: header values and envelope fields.

The live service's Storage-queue envelope is the one public sample of these values: bare job and
collection names (not ARM ids), the expected time without an offset (it is UTC), the region's
display name. HTTP headers and Service Bus application properties use the same values.
"""

from __future__ import annotations

from datetime import UTC, datetime

from horarium.actions.base import ExecutionContext

JOB_ID = "x-ms-scheduler-jobid"
COLLECTION_ID = "x-ms-scheduler-jobcollectionid"
EXPECTED_TIME = "x-ms-scheduler-expected-execution-time"
REGION = "x-ms-scheduler-execution-region"
CLIENT_REQUEST_ID = "x-ms-client-request-id"
EXECUTION_TAG = "x-ms-execution-tag"


def bare_name(arm_id: str) -> str:
    """The last segment of an ARM id (`…/jobs/{job}` -> `{job}`); a bare name is kept."""
    return arm_id.rstrip("/").rsplit("/", 1)[-1]


_last_wire_time: tuple[datetime | None, str] = (None, "")


def wire_time(moment: datetime) -> str:
    """UTC as .NET's XmlSerializer writes a DateTime: no offset, fraction only when non-zero.
    The last value is kept: executions due together (every job of a minute's cron) share it."""
    global _last_wire_time
    last, text = _last_wire_time
    if moment == last and last is not None and moment.tzinfo is last.tzinfo:
        return text
    text = _wire_time(moment)
    _last_wire_time = (moment, text)
    return text


def _wire_time(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    if moment.microsecond:
        return moment.isoformat().rstrip("0")  # isoformat: strftime's cost, a tenth of it
    return moment.isoformat()


def execution_headers(context: ExecutionContext) -> dict[str, str]:
    """The six headers every outbound request (and Service Bus message) carries."""
    return {
        JOB_ID: bare_name(context.job_id),
        COLLECTION_ID: bare_name(context.collection_id),
        EXPECTED_TIME: wire_time(context.expected_time),
        REGION: context.region,
        CLIENT_REQUEST_ID: context.client_request_id,
        EXECUTION_TAG: context.execution_tag,
    }
