"""`HorariumClient`: the REST API's operations on collections, jobs, calendars and monitors, as JSON
in and out.

Bodies are the API's JSON as is (dicts). Every failure is a `ClientError`: `ApiRefused` (the
API's ARM error) or `Unreachable` (no answer). Lists follow `nextLink` on this client's base URL
only, so the token never goes to another host."""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from horarium import __version__
from horarium.client.errors import ApiRefused, ClientError, Unreachable
from horarium.client.names import (
    CalendarRef,
    CollectionRef,
    JobRef,
    MonitorRef,
    collections_path,
)

API_VERSION = "2016-03-01"
TIMEOUT_SECONDS = 30.0
NOT_FOUND = "ResourceNotFound"
EXPAND, DESCRIPTION = "$expand", "scheduleDescription"  # a job's schedule in words (Horarium)


@dataclass(frozen=True)
class Written:
    """The answer to a PUT: whether it created the resource (201), and the resource."""

    created: bool
    body: dict[str, Any]


@dataclass(frozen=True)
class Listing:
    """Entries of a list and the link to the page after them (None: none follows)."""

    value: list[dict[str, Any]]
    next_link: str | None
    extra: dict[str, Any] = field(default_factory=dict)  # other members of the answer

    def as_json(self) -> dict[str, Any]:
        """The API's list form, `{"value": [...], "nextLink": ...}` (and any other members)."""
        return {"value": self.value, "nextLink": self.next_link, **self.extra}


def tls_context(ca_file: Path) -> ssl.SSLContext:
    """Verification against the CA certificates in `ca_file` (PEM) instead of the system's; a
    ValueError saying why when the file cannot be used."""
    try:
        return ssl.create_default_context(cafile=str(ca_file))
    except (OSError, ssl.SSLError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ValueError(f"cannot use the CA file {ca_file}: {reason}") from None


def _user_agent() -> str:
    return "horarium-cli" if __version__ == "unknown" else f"horarium-cli/{__version__}"


class HorariumClient:
    """One Horarium service at `base_url` (`http[s]://host[:port][/prefix]`), with an optional
    bearer token; `verify`: True (the system's CAs) or an SSL context (`tls_context`)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        verify: ssl.SSLContext | bool = True,
        api_version: str = API_VERSION,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_version = api_version
        headers = {"User-Agent": _user_agent(), "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, verify=verify, timeout=timeout
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> HorariumClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    # -- collections ---------------------------------------------------------------------------

    def list_collections(self, subscription: str, resource_group: str | None = None) -> Listing:
        """Every collection of a subscription, or of one of its resource groups."""
        return self._every_page(collections_path(subscription, resource_group), {})

    def get_collection(self, ref: CollectionRef) -> dict[str, Any]:
        return self._json(self._call("GET", ref.path))

    def find_collection(self, ref: CollectionRef) -> dict[str, Any] | None:
        """The collection, or None when it does not exist."""
        return _unless_missing(lambda: self.get_collection(ref))

    def put_collection(self, ref: CollectionRef, body: Any) -> Written:
        """Create or replace; `body` is JSON, or its text as bytes (sent as is)."""
        return self._put(ref.path, body)

    def delete_collection(self, ref: CollectionRef) -> None:
        """Delete the collection, its jobs and their history."""
        self._call("DELETE", ref.path)

    def enable_collection(self, ref: CollectionRef) -> None:
        self._call("POST", ref.path + "/enable")

    def disable_collection(self, ref: CollectionRef) -> None:
        self._call("POST", ref.path + "/disable")

    # -- jobs ----------------------------------------------------------------------------------

    def list_jobs(
        self, ref: CollectionRef, *, state: str | None = None, described: bool = False
    ) -> Listing:
        """Every job of a collection (by name), or those in one state; `described`: with
        Horarium's `properties.scheduleDescription`."""
        params = {"$filter": f"state eq {state}"} if state else {}
        if described:
            params[EXPAND] = DESCRIPTION
        return self._every_page(ref.path + "/jobs", params)

    def get_job(self, job: JobRef, *, described: bool = False) -> dict[str, Any]:
        """The job; `described`: with Horarium's `properties.scheduleDescription`."""
        params = {EXPAND: DESCRIPTION} if described else None
        return self._json(self._call("GET", job.path, params=params))

    def find_job(self, job: JobRef) -> dict[str, Any] | None:
        """The job, or None when it (or its collection) does not exist."""
        return _unless_missing(lambda: self.get_job(job))

    def put_job(self, job: JobRef, body: Any) -> Written:
        """Create or replace; `body` is JSON, or its text as bytes (sent as is)."""
        return self._put(job.path, body)

    def patch_job(self, job: JobRef, body: Any) -> dict[str, Any]:
        """Merge `body` into the job (JSON merge patch)."""
        return self._json(self._call("PATCH", job.path, json_body=body))

    def delete_job(self, job: JobRef) -> None:
        self._call("DELETE", job.path)

    def run_job(self, job: JobRef) -> None:
        """Ask for one execution now (outside the job's series)."""
        self._call("POST", job.path + "/run")

    def history(
        self,
        job: JobRef,
        *,
        status: str | None = None,
        top: int | None = None,
        skip: int | None = None,
    ) -> Listing:
        """One page of the job's history, newest first."""
        params: dict[str, Any] = {}
        if status:
            params["$filter"] = f"status eq {status}"
        if top is not None:
            params["$top"] = top
        if skip:
            params["$skip"] = skip
        return self._page(self._call("GET", job.path + "/history", params=params))

    def next_page(self, listing: Listing) -> Listing:
        """The page after `listing` (which must have a `next_link`)."""
        if listing.next_link is None:
            raise ValueError("no page follows")
        return self._page(self._call("GET", self._rebased(listing.next_link), linked=True))

    def upcoming(self, job: JobRef, count: int) -> Listing:
        """The job's next `count` executions (a Horarium extension)."""
        return self._page(self._call("GET", job.path + "/upcoming", params={"count": count}))

    def collection_upcoming(
        self, ref: CollectionRef, start: str | None = None, end: str | None = None
    ) -> dict[str, Any]:
        """The executions of every job of a collection in [start, end) (ISO 8601; default: the
        next 24 hours), a Horarium extension: `{"from", "to", "jobs": [...]}`."""
        params = {k: v for k, v in (("from", start), ("to", end)) if v is not None}
        return self._json(self._call("GET", ref.path + "/upcoming", params=params))

    # -- exclusion calendars (a Horarium extension) --------------------------------------------

    def list_calendars(self, ref: CollectionRef) -> Listing:
        """Every exclusion calendar of a collection, by name."""
        return self._every_page(ref.path + "/calendars", {})

    def get_calendar(self, calendar: CalendarRef) -> dict[str, Any]:
        return self._json(self._call("GET", calendar.path))

    def find_calendar(self, calendar: CalendarRef) -> dict[str, Any] | None:
        """The calendar, or None when it (or its collection) does not exist."""
        return _unless_missing(lambda: self.get_calendar(calendar))

    def put_calendar(self, calendar: CalendarRef, body: Any) -> Written:
        """Create or replace; the jobs that list the calendar are scheduled again."""
        return self._put(calendar.path, body)

    def delete_calendar(self, calendar: CalendarRef) -> None:
        """Delete a calendar (refused, 409, while a job lists it)."""
        self._call("DELETE", calendar.path)

    # -- check-in monitors (a Horarium extension) ----------------------------------------------

    def list_monitors(self, ref: CollectionRef) -> Listing:
        """Every check-in monitor of a collection, by name."""
        return self._every_page(ref.path + "/monitors", {})

    def get_monitor(self, monitor: MonitorRef) -> dict[str, Any]:
        return self._json(self._call("GET", monitor.path))

    def find_monitor(self, monitor: MonitorRef) -> dict[str, Any] | None:
        """The monitor, or None when it (or its collection) does not exist."""
        return _unless_missing(lambda: self.get_monitor(monitor))

    def put_monitor(self, monitor: MonitorRef, body: Any) -> Written:
        """Create (the answer carries its `pingUrl`, the only time) or replace."""
        return self._put(monitor.path, body)

    def delete_monitor(self, monitor: MonitorRef) -> None:
        self._call("DELETE", monitor.path)

    def check_ins(self, monitor: MonitorRef, *, top: int | None = None, skip: int = 0) -> Listing:
        """One page of the monitor's check-ins, newest first."""
        params: dict[str, Any] = {}
        if top is not None:
            params["$top"] = top
        if skip:
            params["$skip"] = skip
        return self._page(self._call("GET", monitor.path + "/checkIns", params=params))

    # -- HTTP ----------------------------------------------------------------------------------

    def _put(self, path: str, body: Any) -> Written:
        response = self._call("PUT", path, json_body=body)
        return Written(created=response.status_code == 201, body=self._json(response))

    def _every_page(self, path: str, params: dict[str, Any]) -> Listing:
        listing = self._page(self._call("GET", path, params=params))
        value, seen = list(listing.value), set()
        while listing.next_link is not None and listing.next_link not in seen:
            seen.add(listing.next_link)
            listing = self.next_page(listing)
            value += listing.value
        return Listing(value, None)

    def _call(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        json_body: Any = None,
        linked: bool = False,
    ) -> httpx.Response:
        """`linked`: `url` is a nextLink, whose query already holds what is needed."""
        query = None if linked else {"api-version": self.api_version, **(params or {})}
        content: bytes | None = None
        headers: dict[str, str] = {}
        if isinstance(json_body, bytes):
            content, json_body = json_body, None
            headers["Content-Type"] = "application/json"
        try:
            response = self._http.request(
                method, url, params=query, json=json_body, content=content, headers=headers
            )
        except httpx.TransportError as e:
            raise Unreachable(self.base_url, _reason(e)) from None
        if response.status_code >= 400:
            raise _refusal(response)
        return response

    def _rebased(self, link: str) -> str:
        """`nextLink` on this client's base URL: the server may name itself differently
        (`--public-url`), and the token goes only where the caller pointed it."""
        if link.startswith(self.base_url + "/"):
            return link
        at = link.find("/subscriptions/")
        if at < 0:
            raise ClientError(f"the API answered a nextLink that is not a list URL: {link}")
        return self.base_url + link[at:]

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ClientError(
                f"the answer from {self.base_url} is not a JSON object"
                f" (HTTP {response.status_code}): is it a Horarium service?"
            )
        return body

    def _page(self, response: httpx.Response) -> Listing:
        body = self._json(response)
        value = body.get("value")
        link = body.get("nextLink")
        if not isinstance(value, list):
            raise ClientError(f"the answer from {self.base_url} is not a list (no 'value')")
        extra = {k: v for k, v in body.items() if k not in ("value", "nextLink")}
        return Listing(value, link if isinstance(link, str) and link else None, extra)


def _unless_missing(get: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
    try:
        found = get()
    except ApiRefused as e:
        if e.status == 404 and e.code == NOT_FOUND:
            return None
        raise
    return found


_ERRNO = re.compile(r"^\[Errno -?\d+\]\s*")


def _reason(error: httpx.TransportError) -> str:
    """The transport error in a few words (`Connection refused`, the TLS failure, …)."""
    text = str(error).strip() or type(error).__name__
    if isinstance(error, httpx.TimeoutException):
        text = f"no answer in {TIMEOUT_SECONDS:g} s ({type(error).__name__})"
    return _ERRNO.sub("", text)


def _refusal(response: httpx.Response) -> ApiRefused:
    """The ARM error of a failed answer, or its HTTP status when it carries none."""
    try:
        error = response.json().get("error")
        return ApiRefused(response.status_code, str(error["code"]), str(error["message"]))
    except (ValueError, AttributeError, TypeError, KeyError):
        phrase = response.reason_phrase or "error"
        return ApiRefused(
            response.status_code,
            f"HTTP {response.status_code}",
            f"{phrase} from {response.request.method} {response.request.url.copy_with(query=None)}",
        )
