"""Resource names from the URL: what is allowed, and the ARM ids and types built from them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from horarium.model.errors import BadRequest

PROVIDER = "Microsoft.Scheduler"
COLLECTION_TYPE = "Microsoft.Scheduler/jobCollections"
JOB_TYPE = "Microsoft.Scheduler/jobCollections/jobs"
HISTORY_TYPE = "Microsoft.Scheduler/jobCollections/jobs/history"

# Applied with `fullmatch`: a name matches its rule as a whole (no trailing newline, no control
# character anywhere).
_SUBSCRIPTION = re.compile(r"[A-Za-z0-9_-]{1,100}")
_RESOURCE_GROUP = re.compile(r"[-\w.()]{0,89}[-\w()]")
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,98}[A-Za-z0-9_-])?")


def _check(pattern: re.Pattern[str], value: str, what: str, rule: str) -> None:
    if not pattern.fullmatch(value):
        raise BadRequest(f"{what}: {value!r} is not valid ({rule})", code="InvalidResourceName")


@dataclass(frozen=True)
class CollectionName:
    subscription: str
    resource_group: str
    name: str

    def validate(self) -> CollectionName:
        check_subscription(self.subscription)
        check_resource_group(self.resource_group)
        _check(_NAME, self.name, "jobCollectionName", _NAME_RULE)
        return self

    @property
    def key(self) -> str:
        return f"{self.subscription}/{self.resource_group}/{self.name}".lower()

    @property
    def arm_id(self) -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"
            f"/providers/{PROVIDER}/jobCollections/{self.name}"
        )


_NAME_RULE = (
    "1 to 100 letters, digits, '-', '_' and '.', starting with a letter or digit, not ending in '.'"
)


def check_subscription(value: str) -> str:
    _check(_SUBSCRIPTION, value, "subscriptionId", "1 to 100 letters, digits, '-' and '_'")
    return value


def check_resource_group(value: str) -> str:
    _check(
        _RESOURCE_GROUP,
        value,
        "resourceGroupName",
        "1 to 90 letters, digits, '-', '_', '.', '(' and ')', not ending in '.'",
    )
    return value


def check_job_name(name: str) -> str:
    _check(_NAME, name, "jobName", _NAME_RULE)
    return name
