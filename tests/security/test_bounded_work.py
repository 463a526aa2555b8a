"""Nothing a caller sends freezes the service: through `horarium serve`, while the costliest
calendars and schedules we could construct are sent (several at once), `/healthz` answers every
request within 100 ms, every API call answers within 2 s, and the process stays under 300 MB.
Inputs past a documented limit are refused with 400 naming the field and the limit."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from horarium.recurrence.calendars import MAX_ICAL_STEPS
from horarium.recurrence.excluding import MAX_CHECKS
from horarium.recurrence.ical_text import MAX_PARTS
from tests.server_process import DATABASES, ServerProcess, serving

API = {"api-version": "2016-03-01"}
HEALTHZ_BOUND = 0.1  # seconds, every /healthz answer
CALL_BOUND = 2.0  # seconds, every API call
RSS_BOUND = 300 * 1024 * 1024  # bytes


@pytest.fixture(params=DATABASES)
def database(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _ical(*events: str) -> str:
    body = "".join(
        f"BEGIN:VEVENT\r\nUID:{i}@test\r\n{event}END:VEVENT\r\n" for i, event in enumerate(events)
    )
    return f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n"


def _repeating(rule: str, start: str = "20260101T000000Z", end: str = "20260101T000001Z") -> str:
    return f"DTSTART:{start}\r\nDTEND:{end}\r\nRRULE:{rule}\r\n"


def _one_off(day: datetime) -> str:
    stamp = day.strftime("%Y%m%d")
    return f"DTSTART;VALUE=DATE:{stamp}\r\nDTEND;VALUE=DATE:{stamp}\r\n"


@dataclass
class Timed:
    """Every API call's time, and what each answered."""

    server: ServerProcess
    collection: str
    took: list[tuple[float, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        with httpx.Client(base_url=self.server.base_url, timeout=60) as http:
            began = time.monotonic()
            response = http.request(
                method,
                self.collection + path,
                params={**API, **params},
                json=body,
                headers=self.server.auth_headers(),
            )
            with self.lock:
                self.took.append((time.monotonic() - began, f"{method} {path}"))
        return response


# The prober runs in its own process, so that the test's threads (which send the costly inputs
# and parse their answers) do not delay its measurements: it asks /healthz every 20 ms until its
# stdin closes, then prints each answer's seconds and any failure, one per line.
PROBER = """
import sys, threading, time, httpx
done = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
with httpx.Client(base_url=sys.argv[1], timeout=30) as http:
    while not done.is_set():
        began = time.monotonic()
        response = http.get("/healthz")
        print(time.monotonic() - began if response.status_code == 200 else
              f"failed {response.status_code}", flush=True)
        done.wait(0.02)
"""


class Prober:
    """`/healthz` asked every 20 ms from another process, from `start` to `stop`."""

    def __init__(self, base_url: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", PROBER, base_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.took: list[float] = []
        self.failures: list[str] = []

    def stop(self) -> None:
        out, _ = self.process.communicate("", timeout=60)
        for line in out.split():
            if line.startswith("failed"):
                self.failures.append(line)
            else:
                self.took.append(float(line))


def _calendar(api: Timed, name: str, properties: dict[str, Any]) -> httpx.Response:
    return api.call("PUT", f"/calendars/{name}", {"properties": properties})


def _recurrence(frequency: str, interval: int, calendar: str, mode: str = "Skip") -> dict[str, Any]:
    return {
        "frequency": frequency,
        "interval": interval,
        "excludeCalendars": [calendar],
        "onExcluded": mode,
    }


def _job(api: Timed, name: str, recurrence: dict[str, Any]) -> httpx.Response:
    body = {
        "properties": {
            "startTime": "2026-01-01T00:00:00Z",
            "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
            "recurrence": recurrence,
        }
    }
    return api.call("PUT", f"/jobs/{name}", body)


def _refused(response: httpx.Response, *words: str) -> None:
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    for word in words:
        assert word in message, message


def _minutely_ical(api: Timed) -> None:
    _refused(
        _calendar(api, "minutely", {"ical": _ical(_repeating("FREQ=MINUTELY"))}),
        "properties.ical",
        "MINUTELY",
    )


def _secondly_ical(api: Timed) -> None:
    events = [_repeating("FREQ=SECONDLY"), _repeating("FREQ=SECONDLY;INTERVAL=2")]
    _refused(_calendar(api, "secondly", {"ical": _ical(*events)}), "properties.ical", "SECONDLY")


def _hourly_by_rule(api: Timed) -> None:
    rule = "FREQ=DAILY;BYHOUR=" + ",".join(str(h) for h in range(24))
    _refused(_calendar(api, "hourly", {"ical": _ical(_repeating(rule))}), "properties.ical", "1000")


def _ages(api: Timed) -> None:
    """A range from 1900 to 8999 and a minute job moved to the next business day."""
    ranges = [{"start": "1900-01-01", "end": "8999-01-01"}]
    assert _calendar(api, "ages", {"ranges": ranges}).status_code in (200, 201)
    recurrence = _recurrence("Minute", 1, "ages", "NextBusinessDay")
    definition = {"properties": {"recurrence": recurrence, "startTime": "2026-01-01T00:00:00Z"}}
    definition["properties"]["action"] = {
        "type": "Http",
        "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
    }
    response = api.call("POST", "/jobs/ages-draft/upcoming", definition, count=100)
    assert response.status_code == 200, response.text
    assert not [e for e in response.json()["value"] if "skippedByCalendar" not in e]


def _quarter(api: Timed) -> None:
    """Three months excluded, an hourly job moved to the next business day."""
    start = datetime.now(UTC).date()
    ranges = [{"start": start.isoformat(), "end": (start + timedelta(days=92)).isoformat()}]
    assert _calendar(api, "quarter", {"ranges": ranges}).status_code in (200, 201)
    recurrence = _recurrence("Hour", 1, "quarter", "NextBusinessDay")
    assert _job(api, "quarterly", recurrence).status_code in (200, 201)
    for _ in range(3):
        response = api.call("GET", "/jobs/quarterly/upcoming", count=100)
        assert response.status_code == 200, response.text


def _almost_always(api: Timed) -> None:
    """Every day excluded but two minutes, and a minute job moved to the next business day:
    finding its runs needs more checks than the limit allows (its first, or a hundred)."""
    event = _repeating("FREQ=DAILY", "20260101T000100Z", "20260101T235900Z")
    assert _calendar(api, "always", {"ical": _ical(event)}).status_code in (200, 201)
    recurrence = _recurrence("Minute", 1, "always", "NextBusinessDay")
    stored = _job(api, "always", recurrence)  # refused if even its first run needs too many
    if stored.status_code != 400:
        assert stored.status_code in (200, 201), stored.text
        stored = api.call("GET", "/jobs/always/upcoming", count=100)
    _refused(stored, "recurrence.excludeCalendars", str(MAX_CHECKS))


def _thousand_events(api: Timed) -> None:
    """The largest document accepted: a thousand one-day events, and an hourly job."""
    first = datetime(2026, 1, 1, tzinfo=UTC)
    events = [_one_off(first + timedelta(days=i)) for i in range(1000)]
    assert _calendar(api, "many", {"ical": _ical(*events)}).status_code in (200, 201)
    recurrence = _recurrence("Hour", 1, "many")
    assert _job(api, "many", recurrence).status_code in (200, 201)
    response = api.call("GET", "/jobs/many/upcoming", count=100)
    assert response.status_code == 200, response.text


def _never_matching(api: Timed) -> None:
    """Rules whose filters never match: python-dateutil alone would search to the year 9999
    for their next occurrence (seconds each); the count of its work stops them at the limit."""
    rules = [
        "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31",
        "FREQ=WEEKLY;BYMONTH=2;BYMONTHDAY=30;BYDAY=MO",
        "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31",
    ]
    document = _ical(*[_repeating(rule) for rule in rules])
    _refused(
        _calendar(api, "never", {"ical": document}),
        "properties.ical",
        f"more than {MAX_ICAL_STEPS} steps",
        "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31",
    )


def _many_parts(api: Timed) -> None:
    """Nearly 1 MB of short lines: icalendar would spend seconds parsing them."""
    notes = "".join(f"X-NOTE-{i}:n\r\n" for i in range(60_000))
    event = _one_off(datetime(2026, 1, 1, tzinfo=UTC)) + notes
    _refused(
        _calendar(api, "parts", {"ical": _ical(event)}),
        "properties.ical",
        f"at most {MAX_PARTS}",
    )


def _since_1900(api: Timed) -> None:
    """A daily event repeating since 1900: a long expansion accepted (over half the limit)."""
    event = _repeating("FREQ=DAILY", "19000101T090000Z", "19000101T100000Z")
    assert _calendar(api, "old", {"ical": _ical(event)}).status_code in (200, 201)
    recurrence = _recurrence("Minute", 30, "old", "PreviousBusinessDay")
    assert _job(api, "old", recurrence).status_code in (200, 201)
    response = api.call("GET", "/jobs/old/upcoming", count=100)
    assert response.status_code == 200, response.text


WORST: list[Callable[[Timed], None]] = [
    _minutely_ical,
    _secondly_ical,
    _hourly_by_rule,
    _ages,
    _quarter,
    _almost_always,
    _thousand_events,
    _never_matching,
    _many_parts,
    _since_1900,
]


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


@pytest.mark.alone  # its bounds are latencies: measured with nothing else running
def test_the_costliest_inputs_leave_the_service_answering(database: str, tmp_path: Path) -> None:
    with serving(database, tmp_path) as server:
        collection = (
            f"/subscriptions/sub-{uuid.uuid4().hex[:8]}/resourceGroups/rg"
            "/providers/Microsoft.Scheduler/jobCollections/bounded"
        )
        api = Timed(server, collection)
        body = {"location": "West US", "properties": {"sku": {"name": "P20Premium"}}}
        assert api.call("PUT", "", body).status_code == 201
        # The offload pool starts with the first calendar (about half a second, once).
        daily = {"ical": _ical(_repeating("FREQ=DAILY"))}
        assert _calendar(api, "warm", daily).status_code == 201
        prober = Prober(server.base_url)
        try:
            with ThreadPoolExecutor(4) as pool:  # several of them at once
                for outcome in [pool.submit(attack, api) for attack in WORST]:
                    outcome.result()
        finally:
            prober.stop()
        assert server.process is not None
        rss = _rss(server.process.pid)
    assert not prober.failures, prober.failures
    assert len(prober.took) > 10, "the /healthz prober hardly ran"
    slowest = sorted(prober.took)[-3:]
    assert max(prober.took) < HEALTHZ_BOUND, f"/healthz took {slowest} s at the slowest"
    slow_calls = [(round(t, 2), what) for t, what in api.took if t >= CALL_BOUND]
    assert not slow_calls, f"API calls over {CALL_BOUND} s: {slow_calls}"
    assert rss < RSS_BOUND, f"the server holds {rss // 2**20} MB"
