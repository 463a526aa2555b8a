"""JSON documents read from a file or stdin (`-`), as the API takes them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from horarium.cli.options import OneLineError


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


def document_name(
    document: JsonDocument, given: str | None, named: Callable[[str | None, str], str], flag: str
) -> str:
    """The name of the resource a document is put as: `given` (the command's `flag` option),
    else the document's `name` (a resource read back: `collection/name`), else the file's name
    without `.json`. `named` checks it (a one-line usage error when there is none)."""
    if given:
        return named(given, flag)
    inside = document.value.get("name")
    if isinstance(inside, str) and inside.strip("/"):
        return named(inside.rstrip("/").rsplit("/", 1)[-1], flag)
    if document.source != "-":
        return named(Path(document.source).stem, flag)
    return named(None, f"{flag} (the JSON on stdin has no name)")


def resource_body(document: JsonDocument) -> bytes:
    """What a PUT sends for `document`: the resource as the file gives it, or the file's object
    as its `properties` (a calendar's or a monitor's file may hold either)."""
    if "properties" in document.value:
        return document.raw
    return json.dumps({"properties": document.value}).encode()
