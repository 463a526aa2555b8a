"""What every reader of `horarium.importers` produces: a collection or a job to PUT, in the API's
request shape, with where it goes and what to say when a secret it needs is not in its source.
`horarium.cli.rest.source_import` compares and PUTs these, whatever the source."""

from __future__ import annotations

from dataclasses import dataclass
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
