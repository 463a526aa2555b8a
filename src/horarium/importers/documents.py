"""What every reader of `horarium.importers` produces: a collection or a job to PUT, in the API's
request shape, with where it goes and what to say when a secret it needs is not in its source.
`horarium.cli.rest.source_import` compares and PUTs these, whatever the source."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Kind = Literal["collection", "job"]


class SourceError(ValueError):
    """A source that cannot be imported; one line naming where. Raised before anything is
    sent."""


@dataclass(frozen=True)
class Document:
    """One resource to PUT. `names` is `(collection,)` or `(collection, job)`; `secret_hint`
    says what gives a secret `body` lacks (the end of the "needs …" line)."""

    kind: Kind
    resource_group: str
    names: tuple[str, ...]
    body: dict[str, Any]
    secret_hint: str = "the source does not show it"

    @property
    def label(self) -> str:
        """`group/collection[/job]`: how messages and the dry-run table name it."""
        return "/".join((self.resource_group, *self.names))


def read_json_object(path: Path, what: str, max_bytes: int) -> dict[str, Any]:
    """The JSON object in the file at `path` (a BOM allowed), at most `max_bytes` long;
    a `SourceError` naming the file otherwise."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise SourceError(f"{path}: cannot read the {what} ({e.strerror})") from None
    if len(raw) > max_bytes:
        raise SourceError(f"{path}: the {what} is over {max_bytes} bytes (the limit)")
    try:
        value = json.loads(raw.decode("utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SourceError(f"{path}: not valid JSON ({e})") from None
    except RecursionError:
        raise SourceError(f"{path}: the {what} is nested too deeply") from None
    if not isinstance(value, dict):
        raise SourceError(f"{path}: not a JSON object")
    return value
