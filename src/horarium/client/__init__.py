"""A small synchronous client of Horarium's REST API (the Azure Scheduler 2016-03-01 API).

`HorariumClient` (and `Listing`, `Written`, `API_VERSION`) load httpx on first use, so that the
commands that never call the API do not pay for it."""

from typing import TYPE_CHECKING

from horarium.client.errors import ApiRefused, ClientError, Unreachable
from horarium.client.names import CalendarRef, CollectionRef, JobRef, MonitorRef, check_segment

if TYPE_CHECKING:
    from horarium.client.rest import API_VERSION, HorariumClient, Listing, Written

_LAZY = frozenset({"API_VERSION", "HorariumClient", "Listing", "Written"})


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from horarium.client import rest

        return getattr(rest, name)
    raise AttributeError(f"module 'horarium.client' has no attribute {name!r}")


__all__ = [
    "API_VERSION",
    "ApiRefused",
    "CalendarRef",
    "ClientError",
    "CollectionRef",
    "HorariumClient",
    "JobRef",
    "Listing",
    "MonitorRef",
    "Unreachable",
    "Written",
    "check_segment",
]
