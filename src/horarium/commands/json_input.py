"""JSON documents read from a file or stdin (`-`), as the API takes them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO, Any

from horarium.options import OneLineError


@dataclass(frozen=True)
class JsonDocument:
    """A document's text (sent to the API as is) and its value."""

    source: str  # the file name, or '-' for stdin
    raw: bytes
    value: dict[str, Any]


def read_document(file: IO[str], what: str) -> JsonDocument:
    """A JSON object from `file`; a one-line usage error naming the file when it is not one."""
    source = getattr(file, "name", "-")
    source = "-" if source == "<stdin>" else str(source)
    text = file.read()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise OneLineError(
            f"{source}: not valid JSON ({e.msg}, line {e.lineno} column {e.colno})"
        ) from None
    if not isinstance(value, dict):
        raise OneLineError(f"{source}: not a JSON object (a {what} is an object)")
    return JsonDocument(source, text.encode(), value)
