"""Long id lists in slices, so that no `IN` list grows past what a database takes well."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def chunks(items: Sequence[T], size: int = 500) -> Iterable[Sequence[T]]:
    """`items` in slices of at most `size` (the bound on an IN list)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
