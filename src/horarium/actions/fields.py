"""Reading stored action JSON at run time, leniently: property names match case-insensitively,
as on the live service, and map values may be numbers or booleans (sent as their text).

A field that is missing or of the wrong type raises `ActionInputError`, whose text names the
field and the rule; the runner turns it into a Failed execution, never an exception. (The API
validates input with the strict readers of horarium.model.fields, which raise BadRequest.)
An object is a `dict`, as JSON decoding gives it (a plain type check on every attempt's path).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from horarium.model.keys import lookup

__all__ = ["ActionInputError", "lenient_string_map", "lenient_text", "lookup", "section"]


class ActionInputError(ValueError):
    """The stored action cannot be run as it stands (e.g. no uri); the message says why."""


def section(obj: Mapping[str, Any], name: str, where: str, *, required: bool = True) -> Any:
    """A nested object; `where` is the dotted path used in error messages."""
    value = lookup(obj, name)
    if value is None:
        if required:
            raise ActionInputError(f"'{where}.{name}' is required")
        return {}
    if not isinstance(value, dict):
        raise ActionInputError(f"'{where}.{name}' must be an object")
    return value


def lenient_text(
    obj: Mapping[str, Any], name: str, where: str, *, required: bool = True
) -> str | None:
    """A string field, its name in any case; None when absent and optional."""
    value = lookup(obj, name)
    if value is None or (required and value == ""):
        if required:
            raise ActionInputError(f"'{where}.{name}' is required")
        return None
    if not isinstance(value, str):
        raise ActionInputError(f"'{where}.{name}' must be a string")
    return value


def lenient_string_map(obj: Mapping[str, Any], name: str, where: str) -> dict[str, str]:
    """A map of string to string (headers, custom properties), its name in any case and its
    number or boolean values as text; empty when absent."""
    value = lookup(obj, name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ActionInputError(f"'{where}.{name}' must be an object of string values")
    out: dict[str, str] = {}
    for key, item in value.items():
        if not isinstance(item, str | int | float | bool):
            raise ActionInputError(f"'{where}.{name}.{key}' must be a string")
        out[str(key)] = item if isinstance(item, str) else _scalar_text(item)
    return out


def _scalar_text(value: int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
