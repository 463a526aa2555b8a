"""Payload templates (`properties.action.templated: true`): the placeholders a templated action
may hold, and filling them in.

A placeholder is `{{name}}` (spaces inside the braces allowed); every one in a templated field
must be one of NAMES. The values come from the execution (`horarium.actions.templating`), each
escaped by the caller for where it goes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

NAMES = (
    "scheduledTime",
    "executionTime",
    "executionTag",
    "attempt",
    "jobName",
    "collectionName",
)
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
KNOWN = ", ".join("{{" + name + "}}" for name in NAMES)


def unknown_placeholder(text: str) -> str | None:
    """The first placeholder of `text` that is not one of NAMES, as written; None if none."""
    for match in PLACEHOLDER.finditer(text):
        if match.group(1) not in NAMES:
            return match.group(0)
    return None


def fill(text: str, values: Mapping[str, str], escape: Callable[[str], str]) -> str:
    """`text` with each placeholder replaced by its value passed through `escape`; an unknown
    placeholder (stored before validation knew it) is left as it is."""

    def value_of(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return match.group(0) if value is None else escape(value)

    return PLACEHOLDER.sub(value_of, text)
