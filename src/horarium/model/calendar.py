"""Exclusion calendars on the wire (a Horarium extension): `…/jobCollections/{c}/calendars/{n}`.

The resource has ARM's shape (`id`, `type`, `name`, `properties`); `properties` is validated by
`horarium.recurrence.read_calendar` (docs/recurrence.md, "Exclusion calendars") and stored in
its canonical form.
"""

from __future__ import annotations

from typing import Any

from horarium.model.errors import BadRequest
from horarium.model.keys import lookup
from horarium.model.names import check_job_name
from horarium.recurrence import RecurrenceError, read_calendar

CALENDAR_TYPE = "Microsoft.Scheduler/jobCollections/calendars"


def check_calendar_name(name: str) -> str:
    """Calendar names follow the rule of job names."""
    try:
        return check_job_name(name)
    except BadRequest as error:
        raise BadRequest(
            error.message.replace("jobName", "calendarName", 1), code=error.code
        ) from None


def parse_calendar(body: Any, name: str) -> dict[str, Any]:
    """The canonical `properties` of a calendar request body."""
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object with a 'properties' object.")
    given = lookup(body, "name")
    if isinstance(given, str) and given and given.split("/")[-1].lower() != name.lower():
        raise BadRequest(f"name: {given!r} does not match the calendar name in the URL ({name!r})")
    properties = lookup(body, "properties")
    if properties is None:
        raise BadRequest("properties: required")
    try:
        return read_calendar(properties, "properties")
    except RecurrenceError as error:
        raise BadRequest(str(error)) from error


def render_calendar(
    collection_id: str, collection: str, name: str, properties: dict[str, Any]
) -> dict[str, Any]:
    return {
        "id": f"{collection_id}/calendars/{name}",
        "type": CALENDAR_TYPE,
        "name": f"{collection}/{name}",
        "properties": properties,
    }
