"""The one exception of the recurrence contract: bad input, named by its JSON path."""

from __future__ import annotations


class RecurrenceError(ValueError):
    """Invalid `startTime` / `recurrence`. `field` is the JSON path from the properties object
    (``recurrence.schedule.minutes[2]``); `rule` says what is wrong with it."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.field, self.rule))
