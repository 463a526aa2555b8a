"""The Slack, Teams and PagerDuty payload schemas kept as test data (tests/data/channels, with
their sources in its README): `check(format, payload)` raises when a payload breaks its
service's documented shape."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

FOLDER = Path(__file__).parent / "data" / "channels"
FILES = {
    "slack": "slack-incoming-webhook.schema.json",
    "teams": "teams-incoming-webhook.schema.json",
    "pagerduty": "pagerduty-events-v2.schema.json",
}


@cache
def _validator(kind: str) -> Any:
    schema = json.loads((FOLDER / FILES[kind]).read_text())
    return jsonschema_rs.validator_for(schema, validate_formats=True)


def check(kind: str, payload: Any) -> None:
    """Raises `jsonschema_rs.ValidationError` naming the first place `payload` breaks the
    schema of `kind` (slack, teams, pagerduty)."""
    _validator(kind).validate(payload)
