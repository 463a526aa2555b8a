"""Typed reads of already key-canonicalized API input; every failure is a BadRequest naming the
field and the rule (the actions read stored JSON at run time with horarium.actions.fields)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from horarium.model.errors import BadRequest

_DIGITS = re.compile(r"-?\d{1,18}")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def obj(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRequest(f"{path}: must be a JSON object")
    return value


def optional_obj(parent: Mapping[str, Any], name: str, path: str) -> dict[str, Any] | None:
    value = parent.get(name)
    if value is None:
        return None
    return obj(value, _join(path, name))


def text(
    parent: Mapping[str, Any], name: str, path: str, *, required: bool = False, max_len: int = 0
) -> str | None:
    """A string property; `required` also refuses the empty string."""
    value = parent.get(name)
    where = _join(path, name)
    if value is None:
        if required:
            raise BadRequest(f"{where}: required")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{where}: must be a string")
    if required and not value.strip():
        raise BadRequest(f"{where}: must not be empty")
    if max_len and len(value) > max_len:
        raise BadRequest(f"{where}: at most {max_len} characters ({len(value)} given)")
    return value


def integer(
    parent: Mapping[str, Any],
    name: str,
    path: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int | None:
    """An integer property (integral JSON numbers and digit strings, as Newtonsoft accepted)."""
    value = parent.get(name)
    where = _join(path, name)
    if value is None:
        return None
    if isinstance(value, bool):
        raise BadRequest(f"{where}: must be an integer")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        value = int(value.strip())
    if not isinstance(value, int):
        raise BadRequest(f"{where}: must be an integer")
    if minimum is not None and value < minimum:
        raise BadRequest(f"{where}: {value} is less than {minimum}")
    if maximum is not None and value > maximum:
        raise BadRequest(f"{where}: {value} is more than {maximum}")
    return value


def boolean(parent: Mapping[str, Any], name: str, path: str) -> bool | None:
    value = parent.get(name)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise BadRequest(f"{path}.{name}: must be true or false")
    return value


def string_map(parent: Mapping[str, Any], name: str, path: str) -> dict[str, str] | None:
    """An object whose values are all strings (headers, tags, custom properties)."""
    value = parent.get(name)
    where = _join(path, name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRequest(f"{where}: must be an object of string values")
    for key, item in value.items():
        if not isinstance(item, str):
            raise BadRequest(f"{where}.{key}: must be a string")
    return dict(value)
