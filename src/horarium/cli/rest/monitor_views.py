"""How the monitor commands show a check-in monitor and its check-ins."""

from __future__ import annotations

from typing import Any

from horarium.cli.rest.job_views import schedule_text, short_name
from horarium.cli.rest.output import NONE, text, when

MONITOR_HEADERS = ("NAME", "STATUS", "LAST CHECK-IN", "NEXT EXPECTED", "EXPECTED")
CHECK_IN_HEADERS = ("TIME", "KIND", "EXIT CODE", "BODY")
BODY_WIDTH = 60


def expected(body: dict[str, Any]) -> str:
    """When check-ins are expected, in words: the describer jobs' schedules use."""
    return schedule_text(body)


def monitor_row(body: dict[str, Any]) -> list[str]:
    properties = body.get("properties") or {}
    return [
        short_name(body),
        text(properties.get("status")),
        when(properties.get("lastCheckIn")),
        when(properties.get("nextExpected")),
        expected(body),
    ]


def monitor_pairs(body: dict[str, Any]) -> list[tuple[str, str]]:
    properties = body.get("properties") or {}
    pairs = [
        ("name", short_name(body)),
        ("status", text(properties.get("status"))),
        ("state", text(properties.get("state"))),
        ("expected", expected(body)),
        ("grace", text(properties.get("grace"))),
        ("max runtime", text(properties.get("maxRuntime") or NONE)),
        ("last check-in", when(properties.get("lastCheckIn"))),
        ("next expected", when(properties.get("nextExpected"))),
    ]
    if properties.get("pingUrl"):
        pairs.append(("ping url", str(properties["pingUrl"])))
    pairs.append(("id", str(body.get("id", NONE))))
    return pairs


def check_in_row(entry: dict[str, Any]) -> list[str]:
    properties = entry.get("properties") or {}
    code = properties.get("exitCode")
    body = " ".join(str(properties.get("body") or "").split())
    if len(body) > BODY_WIDTH:
        body = body[: BODY_WIDTH - 1] + "…"
    return [
        when(properties.get("time")),
        text(properties.get("kind")),
        NONE if code is None else str(code),
        body or NONE,
    ]
