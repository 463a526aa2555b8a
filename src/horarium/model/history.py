"""Job history entries as the live service returned them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from horarium.model import datetimes
from horarium.model.enums import HistoryStatus
from horarium.model.names import HISTORY_TYPE

_MAX_TICKS = 3_155_378_975_999_999_999  # DateTime.MaxValue.Ticks
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_INT64_MAX = 9_223_372_036_854_775_807


@dataclass(frozen=True)
class HistoryEntry:
    row_id: int
    action_name: str
    status: str
    retry_count: int
    repeat_count: int
    expected_execution_time: datetime | None
    start_time: datetime | None
    end_time: datetime | None
    message: str


def _ticks(value: datetime) -> int:
    delta = value.astimezone(UTC) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10_000_000 + delta.microseconds * 10


def history_id(entry: HistoryEntry) -> str:
    """`{DateTime.MaxValue.Ticks − start ticks}:{Int64.MaxValue − sequence}`, 20 digits each:
    ids sort newest first, as the live service's did."""
    when = entry.start_time or entry.expected_execution_time
    reverse = _MAX_TICKS - _ticks(when) if when is not None else _MAX_TICKS
    return f"{reverse:020d}:{_INT64_MAX - entry.row_id:020d}"


def render_history(job_arm_id: str, job_name: str, entry: HistoryEntry) -> dict[str, Any]:
    """`job_name` is `collection/job`. Completed entries carry no `status` (live service)."""
    ident = history_id(entry)
    properties: dict[str, Any] = {}
    for key, value in (
        ("startTime", entry.start_time),
        ("endTime", entry.end_time),
        ("expectedExecutionTime", entry.expected_execution_time),
    ):
        if value is not None:
            properties[key] = datetimes.format_ticks(value)
    if entry.status != HistoryStatus.COMPLETED:
        properties["status"] = entry.status
    properties["message"] = entry.message
    properties["retryCount"] = entry.retry_count
    properties["repeatCount"] = entry.repeat_count
    properties["actionName"] = entry.action_name
    return {
        "id": f"{job_arm_id}/history/{ident}",
        "type": HISTORY_TYPE,
        "name": f"{job_name}/{ident}",
        "properties": properties,
    }
