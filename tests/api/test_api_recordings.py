"""Every request recorded against the live Azure Scheduler service is replayed against Horarium;
the status and the body must be the recorded ones.

Ignored, because they must differ: the subscription id (each recording runs in a subscription
of its own), and the instants that depend on when the recording was made. Every date-time in
the requests and the recorded responses is moved forward by the same whole number of weeks, to
the week before now (so a 2016 recording's "endTime 2020" still lies ahead, as it did then,
and weekdays are kept). `status.nextExecutionTime` must then be there exactly when it was
recorded, and lie a whole number of recurrence periods after the moved recorded instant (the
same series: the replay runs up to a week later than the moved recording).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.api.api_client import Api

# The recordings, with their origin and licence: recordings/README.md.
RECORDINGS = Path(__file__).with_name("recordings")
EXPECTED = {
    "dotnet_Scenario_JobCollectionEnableDisable.json",
    "dotnet_Scenario_JobCreateHttpJobWithBasicAuth.json",
    "dotnet_Scenario_JobCreatePatchDeleteStorageJob.json",
    "dotnet_Scenario_JobCreateUpdateDeleteHttpJob.json",
    "test_mgmt_scheduler.test_scheduler.yaml",
    "test_mgmt_scheduler.test_scheduler_job_custom_time.yaml",
}
PERIODS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1), "day": timedelta(days=1)}
PERIODS["week"] = timedelta(days=7)


_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?Z")


def _shift(text: str, by: timedelta) -> str:
    """Every `…Z` date-time in `text` moved by `by` (whole days: the fraction text is kept)."""

    def move(m: re.Match[str]) -> str:
        moved = datetime.fromisoformat(m.group(1)) + by
        return moved.strftime("%Y-%m-%dT%H:%M:%S") + (m.group(2) or "") + "Z"

    return _DATETIME.sub(move, text)


@dataclass(frozen=True)
class Exchange:
    method: str
    path_and_query: str
    request_body: str
    status: int
    response_body: str


# The .NET recorder (HttpMockServer) stores entries grouped by request URI, not in the order they
# were made. Where that differs, the order of the calls in the scenario's code (and the ARM
# routing timestamps) is given here: Scenario_JobCollectionEnableDisable creates two collections,
# gets both, disables one, gets it, enables it, gets it, and deletes both.
CALL_ORDER = {"dotnet_Scenario_JobCollectionEnableDisable": [0, 1, 2, 3, 6, 4, 7, 5, 8, 9]}


def _dotnet(path: Path) -> tuple[str, datetime, list[Exchange]]:
    data = json.loads(path.read_text())
    subscription = data["Variables"]["SubscriptionId"]
    recorded = parsedate_to_datetime(data["Entries"][0]["ResponseHeaders"]["Date"][0])
    order = CALL_ORDER.get(path.stem, range(len(data["Entries"])))
    entries = [data["Entries"][i] for i in order]
    assert len(entries) == len(data["Entries"])
    return (
        subscription,
        recorded,
        [
            Exchange(
                method=e["RequestMethod"],
                path_and_query=e["RequestUri"],
                request_body=e["RequestBody"] or "",
                status=e["StatusCode"],
                response_body=e["ResponseBody"] or "",
            )
            for e in entries
        ],
    )


def _python(path: Path) -> tuple[str, datetime, list[Exchange]]:
    data = yaml.safe_load(path.read_text())
    recorded = parsedate_to_datetime(data["interactions"][0]["response"]["headers"]["date"][0])
    exchanges = []
    for item in data["interactions"]:
        url = urlsplit(item["request"]["uri"])
        exchanges.append(
            Exchange(
                method=item["request"]["method"],
                path_and_query=f"{url.path}?{url.query}",
                request_body=item["request"]["body"] or "",
                status=item["response"]["status"]["code"],
                response_body=item["response"]["body"]["string"] or "",
            )
        )
    return "00000000-0000-0000-0000-000000000000", recorded, exchanges


def _recordings() -> Iterator[Path]:
    yield from sorted(RECORDINGS.glob("dotnet_*.json"))
    yield from sorted(RECORDINGS.glob("*.yaml"))


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _compare_next_execution(ours: dict[str, Any], recorded: dict[str, Any]) -> None:
    """Pops `status.nextExecutionTime` from both after checking it is the same series."""
    ours_status = ours.get("properties", {}).get("status", {})
    recorded_status = recorded.get("properties", {}).get("status", {})
    assert ("nextExecutionTime" in ours_status) == ("nextExecutionTime" in recorded_status)
    if "nextExecutionTime" not in recorded_status:
        return
    mine = _instant(ours_status.pop("nextExecutionTime"))
    theirs = _instant(recorded_status.pop("nextExecutionTime"))
    recurrence = recorded["properties"].get("recurrence")
    if recurrence and recurrence["frequency"] in PERIODS:
        period = PERIODS[recurrence["frequency"]] * recurrence.get("interval", 1)
        assert mine >= theirs, (mine, theirs)
        assert (mine - theirs) % period == timedelta(0), (mine, theirs, period)


def test_every_recording_is_there_to_replay() -> None:
    """A missing recording fails the suite (the replays below would silently be fewer)."""
    assert {p.name for p in _recordings()} == EXPECTED


@pytest.mark.parametrize(
    "recording", sorted(RECORDINGS / name for name in EXPECTED), ids=lambda p: p.stem
)
def test_recorded_exchange_replays_identically(api: Api, recording: Path) -> None:
    recorded_subscription, recorded_at, exchanges = (
        _dotnet(recording) if recording.suffix == ".json" else _python(recording)
    )
    subscription = f"replay-{uuid.uuid4().hex[:8]}"
    weeks = (datetime.now(UTC) - recorded_at) // timedelta(days=7)
    shift = timedelta(days=7 * weeks)
    for exchange in exchanges:
        target = exchange.path_and_query.replace(recorded_subscription, subscription)
        response = api.http.request(
            exchange.method,
            target,
            content=_shift(exchange.request_body, shift).encode(),
            headers={"content-type": "application/json; charset=utf-8"},
        )
        where = f"{exchange.method} {target}"
        assert response.status_code == exchange.status, (where, response.text)
        if not exchange.response_body:
            assert response.content == b"", where
            continue
        expected = json.loads(
            _shift(exchange.response_body, shift).replace(recorded_subscription, subscription)
        )
        ours = response.json()
        _compare_next_execution(ours, expected)
        assert ours == expected, where
