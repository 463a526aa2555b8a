"""OpenAPI schemas of the collection timeline (`GET …/jobCollections/{jc}/upcoming`) and of a
job's `scheduleDescription` (Horarium extensions), added to `/openapi.json` by `api/openapi.py`."""

from __future__ import annotations

from typing import Any

from horarium.api.windows import MAX_EXECUTIONS, MAX_WINDOW

_DESCRIPTION = {
    "type": "string",
    "readOnly": True,
    "description": "Horarium extension, only with `$expand=scheduleDescription` on Jobs_Get,"
    " Jobs_List, Jobs_CreateOrUpdate and Jobs_Patch: the job's timing in plain English"
    " (frequency or cron, time zone, exclusion calendars and onExcluded, jitter, count,"
    " endTime). Ignored when sent back.",
    "examples": [
        "weekdays at 09:15 Europe/Paris, except business (weekends, holidays FR);"
        " moved to the next business day"
    ],
}
_HOLD = {
    "type": "object",
    "description": "Why the job's executions do not run now: the job is not Enabled (by: job)"
    " or its collection is not (by: collection); with a pause, until when.",
    "properties": {
        "by": {"type": "string", "enum": ["job", "collection"]},
        "state": {"type": "string"},
        "until": {"type": ["string", "null"], "format": "date-time"},
    },
}
_EXECUTION = {
    "allOf": [{"$ref": "#/components/schemas/UpcomingExecution"}],
    "properties": {
        "paused": {
            "type": "boolean",
            "description": "It would run but the job or its collection is Disabled (or paused"
            " until after it): it does not run unless enabled again first; absent otherwise.",
        },
        "jittered": {
            "type": "boolean",
            "description": "recurrence.jitter moved it after scheduledExecutionTime; absent"
            " otherwise.",
        },
    },
}
_JOB = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The job's name."},
        "state": {"type": "string"},
        "scheduleDescription": {"type": "string"},
        "timeZone": {"type": "string", "description": "The IANA zone of the job's schedule."},
        "heldBy": _HOLD,
        "error": {
            "type": "string",
            "description": "Its executions could not be listed (e.g. the calendars' 20,000"
            " checks limit); the other jobs are listed.",
        },
        "executions": {
            "type": "array",
            "description": "Executions from `from` (inclusive) to `to` (exclusive), counted"
            " from the job's next execution; calendar-skipped ones included and marked."
            " A Completed or Faulted job has none.",
            "items": {"$ref": "#/components/schemas/CollectionUpcomingExecution"},
        },
    },
}
_LISTING = {
    "type": "object",
    "description": f"At most {MAX_WINDOW.days} days and {MAX_EXECUTIONS} executions in all"
    " (400 naming the limit otherwise).",
    "properties": {
        "from": {"type": "string", "format": "date-time"},
        "to": {"type": "string", "format": "date-time"},
        "collectionState": {"type": "string"},
        "value": {"type": "array", "items": {"$ref": "#/components/schemas/CollectionUpcomingJob"}},
        "nextLink": {"type": "null"},
    },
}


def add_timeline_schemas(schemas: dict[str, Any]) -> None:
    """Add the timeline's schemas and `JobProperties.scheduleDescription`."""
    schemas["JobProperties"]["properties"]["scheduleDescription"] = _DESCRIPTION
    schemas["CollectionUpcomingExecution"] = _EXECUTION
    schemas["CollectionUpcomingJob"] = _JOB
    schemas["CollectionUpcomingList"] = _LISTING
