"""Enumerations of the 2016-03-01 API: read in any casing, written the way the live service did.

The live service returned some fields in camelCase (`"state": "enabled"`, `"frequency": "week"`)
and others in PascalCase (`"type": "Http"`, `"sku": {"name": "Free"}`); `camel` reproduces the
Newtonsoft camel-casing it used (`AMQP` -> `amqp`, `NetMessaging` -> `netMessaging`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from horarium.model.errors import BadRequest


class JobState(StrEnum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    FAULTED = "Faulted"
    COMPLETED = "Completed"


class CollectionState(StrEnum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    SUSPENDED = "Suspended"
    DELETED = "Deleted"


class HistoryStatus(StrEnum):
    COMPLETED = "Completed"
    FAILED = "Failed"
    POSTPONED = "Postponed"
    SKIPPED = "Skipped"  # Horarium: not run, by the job's executionPolicy.overlap


ACTION_TYPES = ("Http", "Https", "StorageQueue", "ServiceBusQueue", "ServiceBusTopic")
HTTP_AUTH_TYPES = ("NotSpecified", "ClientCertificate", "ActiveDirectoryOAuth", "Basic")
SERVICE_BUS_AUTH_TYPES = ("NotSpecified", "SharedAccessKey")
TRANSPORT_TYPES = ("NotSpecified", "NetMessaging", "AMQP")
RETRY_TYPES = ("None", "Fixed", "Exponential")
JOB_STATES = tuple(JobState)
SETTABLE_JOB_STATES = (JobState.ENABLED, JobState.DISABLED)
FINAL_JOB_STATES = (JobState.COMPLETED, JobState.FAULTED)
FREQUENCIES = ("Minute", "Hour", "Day", "Week", "Month")
WEEK_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
COLLECTION_STATES = tuple(CollectionState)
SETTABLE_COLLECTION_STATES = (
    CollectionState.ENABLED,
    CollectionState.DISABLED,
    CollectionState.SUSPENDED,
)
SKUS = ("Standard", "Free", "P10Premium", "P20Premium", "Seconds")  # Seconds: Horarium's
HISTORY_STATUSES = tuple(HistoryStatus)


def find(value: Any, allowed: tuple[str, ...]) -> str | None:
    """The canonical spelling of `value` among `allowed` (any casing), or None."""
    if not isinstance(value, str):
        return None
    lowered = value.strip().lower()
    for name in allowed:
        if name.lower() == lowered:
            return str(name)
    return None


def parse(value: Any, allowed: tuple[str, ...], path: str) -> str:
    """The canonical spelling, or a 400 naming the field and the allowed values."""
    found = find(value, allowed)
    if found is None:
        raise BadRequest(f"{path}: {value!r} is not one of {', '.join(allowed)}")
    return found


def camel(value: str) -> str:
    """Newtonsoft's camel case: lower the leading run of capitals (but keep the last capital
    of a run that starts a new word: `NetMessaging` -> `netMessaging`, `AMQP` -> `amqp`)."""
    chars = list(value)
    for i, ch in enumerate(chars):
        if i == 1 and not ch.isupper():
            break
        has_next = i + 1 < len(chars)
        if i > 0 and has_next and not chars[i + 1].isupper():
            break
        chars[i] = ch.lower()
    return "".join(chars)
