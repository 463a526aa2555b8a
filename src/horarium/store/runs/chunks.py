"""Long lists of rows in slices: the claim's Postponed history and the outbox's rows are written
at most `size` rows per executemany. (Id lists are not sliced: each is one parameter,
`id_lists`.)"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")


def chunks(items: Sequence[T], size: int = 500) -> Iterable[Sequence[T]]:
    """`items` in slices of at most `size`."""
    for i in range(0, len(items), size):
        yield items[i : i + size]
