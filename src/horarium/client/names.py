"""Collections and jobs named as the SDK names them, and their paths under Azure Resource
Manager's URL scheme (each name one percent-encoded path segment)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

PROVIDER_PATH = "/providers/Microsoft.Scheduler/jobCollections"


def check_segment(value: str, what: str) -> str:
    """`value` when it can be one path segment; a ValueError naming `what` otherwise. ('.' and
    '..' would be read as relative paths and name another resource.)"""
    if value in ("", ".", ".."):
        raise ValueError(f"{what} {value!r} is not a valid name")
    return value


def _segment(value: str, what: str) -> str:
    return quote(check_segment(value, what), safe="")


def collections_path(subscription: str, resource_group: str | None = None) -> str:
    """The list of a subscription's collections, or of one resource group's."""
    path = f"/subscriptions/{_segment(subscription, 'subscription')}"
    if resource_group is not None:
        path += f"/resourceGroups/{_segment(resource_group, 'resource group')}"
    return path + PROVIDER_PATH


@dataclass(frozen=True)
class CollectionRef:
    subscription: str
    resource_group: str
    name: str

    @property
    def path(self) -> str:
        group = collections_path(self.subscription, self.resource_group)
        return f"{group}/{_segment(self.name, 'collection')}"

    def job(self, name: str) -> JobRef:
        return JobRef(self, name)

    def calendar(self, name: str) -> CalendarRef:
        return CalendarRef(self, name)

    def monitor(self, name: str) -> MonitorRef:
        return MonitorRef(self, name)

    def __str__(self) -> str:
        return f"{self.resource_group}/{self.name}"


@dataclass(frozen=True)
class JobRef:
    collection: CollectionRef
    name: str

    @property
    def path(self) -> str:
        return f"{self.collection.path}/jobs/{_segment(self.name, 'job')}"

    def __str__(self) -> str:
        return f"{self.collection}/{self.name}"


@dataclass(frozen=True)
class CalendarRef:
    """An exclusion calendar of a collection (a Horarium extension)."""

    collection: CollectionRef
    name: str

    @property
    def path(self) -> str:
        return f"{self.collection.path}/calendars/{_segment(self.name, 'calendar')}"

    def __str__(self) -> str:
        return f"{self.collection}/{self.name}"


@dataclass(frozen=True)
class MonitorRef:
    """A check-in monitor of a collection (a Horarium extension)."""

    collection: CollectionRef
    name: str

    @property
    def path(self) -> str:
        return f"{self.collection.path}/monitors/{_segment(self.name, 'monitor')}"

    def __str__(self) -> str:
        return f"{self.collection}/{self.name}"
