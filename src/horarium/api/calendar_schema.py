"""The OpenAPI schemas of exclusion calendars (a Horarium extension): the calendar resource,
the job's `recurrence.excludeCalendars` / `onExcluded`, and the upcoming list's calendar marks."""

from __future__ import annotations

from typing import Any

_CALENDAR_PROPERTIES = {
    "type": "object",
    "description": "What the calendar excludes (docs/recurrence.md, 'Exclusion calendars').",
    "properties": {
        "dates": {
            "type": "array",
            "maxItems": 1000,
            "items": {"type": "string", "format": "date"},
            "description": "Days excluded whole (YYYY-MM-DD), in each job's time zone.",
        },
        "ranges": {
            "type": "array",
            "maxItems": 1000,
            "items": {
                "type": "object",
                "required": ["start", "end"],
                "properties": {
                    "start": {"type": "string", "description": "ISO 8601 date-time"},
                    "end": {"type": "string", "description": "ISO 8601 date-time, exclusive"},
                },
            },
            "description": "Spans excluded; without an offset read on each job's wall clock.",
        },
        "holidays": {
            "type": "object",
            "required": ["country"],
            "properties": {
                "country": {"type": "string", "examples": ["US"]},
                "subdivision": {"type": "string", "examples": ["NY"]},
            },
            "description": "Public holidays of the `holidays` package, excluded whole.",
        },
        "ical": {
            "type": "string",
            "maxLength": 1000000,
            "description": "An iCalendar document (at most 1 MB, 10,000 parts: content lines,"
            " parameters and list values, and 1,000 events); its events, recurring ones included,"
            " are excluded up to 2100. A TZID names an IANA or Windows time zone; VTIMEZONE"
            " definitions are not read. Rules whose expansion up to 2100 takes more than"
            " 2,000,000 steps (such as one that never matches) are refused.",
        },
        "weekends": {"type": "boolean", "description": "true: Saturdays and Sundays excluded."},
    },
}


def member_resource(kind: str, properties: str) -> dict[str, Any]:
    """The schema of a collection's member resource (`jobCollections/{kind}`) in ARM's shape,
    its `properties` the component schema `properties`."""
    return {
        "type": "object",
        "properties": {
            "id": {"type": "string", "readOnly": True},
            "type": {
                "type": "string",
                "readOnly": True,
                "examples": [f"Microsoft.Scheduler/jobCollections/{kind}"],
            },
            "name": {"type": "string", "readOnly": True},
            "properties": {"$ref": f"#/components/schemas/{properties}"},
        },
    }


_CALENDAR = member_resource("calendars", "CalendarProperties")

_RECURRENCE = {
    "excludeCalendars": {
        "type": "array",
        "maxItems": 10,
        "items": {"type": "string"},
        "description": "Horarium extension: calendars of the collection whose days or times"
        " the job does not run on.",
    },
    "onExcluded": {
        "type": "string",
        "enum": ["Skip", "NextBusinessDay", "PreviousBusinessDay"],
        "description": "Horarium extension: what happens to an excluded execution (default"
        " Skip); the others move it to the same wall-clock time on the nearest day no listed"
        " calendar excludes.",
    },
}

_UPCOMING = {
    "movedByCalendar": {
        "type": "string",
        "description": "The calendar that excluded the scheduled time; it runs here instead.",
    },
    "scheduledExecutionTimes": {
        "type": "array",
        "items": {"type": "string", "format": "date-time"},
        "description": "The schedule's times (UTC) this execution stands for, when moved.",
    },
    "skippedByCalendar": {
        "type": "string",
        "description": "The calendar that excluded this scheduled time: it does not run"
        " (executionTime is the scheduled time; repeatCount is null).",
    },
}


_EXCLUDED_DAY = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date"},
        "wholeDay": {
            "type": "boolean",
            "description": "The whole day is excluded; false: only `spans` of it.",
        },
        "reasons": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {
                        "type": "string",
                        "enum": ["date", "weekend", "holiday", "range", "event"],
                    },
                    "detail": {
                        "type": "string",
                        "description": "The date, weekday, holiday's name, range or iCalendar"
                        " event's SUMMARY.",
                    },
                },
            },
        },
        "spans": {
            "type": "array",
            "description": "For a day excluded in part: the excluded spans of it (UTC, end"
            " exclusive).",
            "items": {
                "type": "object",
                "properties": {
                    "start": {"type": "string", "format": "date-time"},
                    "end": {"type": "string", "format": "date-time"},
                },
            },
        },
    },
}

_EXCLUDED_DATES = {
    "type": "object",
    "description": "The days a calendar excludes from `from` to `to` (exclusive, at most 366"
    " days), read in `timeZone`; days it does not touch are left out.",
    "properties": {
        "calendar": {"type": "string"},
        "from": {"type": "string", "format": "date"},
        "to": {"type": "string", "format": "date"},
        "timeZone": {"type": "string"},
        "value": {"type": "array", "items": {"$ref": "#/components/schemas/CalendarExcludedDay"}},
    },
}

_PREVIEW_EXECUTION = {
    "allOf": [{"$ref": "#/components/schemas/CollectionUpcomingExecution"}],
    "properties": {
        "change": {
            "type": "string",
            "enum": ["new", "same", "released"],
            "description": "new: the body skips or moves it and the stored calendar does not"
            " (or not so); same: both do; released: only the stored calendar does (as the"
            " stored calendar has it).",
        },
    },
}

_PREVIEW_JOB = {
    "allOf": [{"$ref": "#/components/schemas/CollectionUpcomingJob"}],
    "properties": {
        "executions": {
            "type": "array",
            "description": "Only the executions this calendar skips or moves in the window.",
            "items": {"$ref": "#/components/schemas/CalendarPreviewExecution"},
        }
    },
}

_PREVIEW = {
    "type": "object",
    "description": "A calendar body, not stored: what it excludes and does to the jobs of the"
    " collection that list the calendar, from `from` to `to` (at most 92 days; at most 20,000"
    " executions of those jobs, 400 naming the limit otherwise).",
    "properties": {
        "calendar": {"type": "string"},
        "from": {"type": "string", "format": "date-time"},
        "to": {"type": "string", "format": "date-time"},
        "timeZone": {"type": "string", "description": "The zone excludedDates are read in."},
        "collectionState": {"type": "string"},
        "excludedDates": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/CalendarExcludedDay"},
        },
        "jobs": {"type": "array", "items": {"$ref": "#/components/schemas/CalendarPreviewJob"}},
    },
}


def list_result(item: str) -> dict[str, Any]:
    """The schema of a list answer (`value`, `nextLink`) of the component schema `item`."""
    return {
        "type": "object",
        "properties": {
            "value": {"type": "array", "items": {"$ref": f"#/components/schemas/{item}"}},
            "nextLink": {"type": ["string", "null"]},
        },
    }


def add_calendar_schemas(schemas: dict[str, Any]) -> None:
    """Add the calendar schemas to the document's component schemas."""
    schemas["CalendarProperties"] = _CALENDAR_PROPERTIES
    schemas["CalendarDefinition"] = _CALENDAR
    schemas["CalendarListResult"] = list_result("CalendarDefinition")
    schemas["CalendarExcludedDay"] = _EXCLUDED_DAY
    schemas["CalendarExcludedDates"] = _EXCLUDED_DATES
    schemas["CalendarPreviewExecution"] = _PREVIEW_EXECUTION
    schemas["CalendarPreviewJob"] = _PREVIEW_JOB
    schemas["CalendarPreview"] = _PREVIEW
    recurrence = dict(schemas["JobRecurrence"])
    recurrence["properties"] = {**recurrence["properties"], **_RECURRENCE}
    schemas["JobRecurrence"] = recurrence
    upcoming = dict(schemas["UpcomingExecution"])
    upcoming["properties"] = {
        **upcoming["properties"],
        **_UPCOMING,
        "repeatCount": {"type": ["integer", "null"]},
    }
    schemas["UpcomingExecution"] = upcoming
