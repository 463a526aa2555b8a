"""The one exception of the recurrence contract: bad input, named by its JSON path."""

from __future__ import annotations

from typing import Any


class RecurrenceError(ValueError):
    """Invalid `startTime` / `recurrence`. `field` is the JSON path from the properties object
    (``recurrence.schedule.minutes[2]``); `rule` says what is wrong with it."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.field, self.rule))


def json_kind(value: Any) -> str:
    """What a JSON value is, in the words of an error message ("a list", "null")."""
    names = {bool: "a boolean", dict: "an object", list: "a list", str: "a string"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__
