"""Property names are matched case-insensitively, as the live service (Newtonsoft) did.

A *shape* lists the known property names of an object in their canonical (2016-03-01 spec)
spelling; `canonical_keys` rewrites an input's keys to that spelling and leaves unknown keys
alone, so validation can then use plain `obj.get("uri")`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MapOf:
    """An object with free keys (headers, tags): keys kept as given, values shaped alike."""

    values: Shape


@dataclass(frozen=True)
class ListOf:
    items: Shape


# None: a leaf value; a dict: an object with known properties.
Shape = Mapping[str, "Shape"] | MapOf | ListOf | None


def lookup(obj: Mapping[str, Any], name: str) -> Any:
    """`obj[name]`, matching the key case-insensitively; None when absent."""
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def canonical_keys(value: Any, shape: Shape) -> Any:
    """A copy of `value` whose known property names are spelled canonically."""
    if shape is None:
        return value
    if isinstance(shape, ListOf):
        if isinstance(value, list):
            return [canonical_keys(item, shape.items) for item in value]
        return value
    if not isinstance(value, dict):
        return value
    if isinstance(shape, MapOf):
        return {key: canonical_keys(item, shape.values) for key, item in value.items()}
    spelled = {name.lower(): name for name in shape}
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = spelled.get(key.lower(), key) if isinstance(key, str) else key
        out[name] = canonical_keys(item, shape.get(name))
    return out
