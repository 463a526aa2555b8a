"""The service's own OpenAPI document (`/openapi.json`): FastAPI's paths with the request and
response models of the Azure Scheduler 2016-03-01 spec (a verbatim copy ships with the package),
converted to OpenAPI 3, plus Horarium's extensions, the ARM error body and the bearer scheme."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from horarium.api.calendar_schema import add_calendar_schemas
from horarium.api.monitor_schema import add_monitor_schemas
from horarium.api.timeline_schema import add_timeline_schemas
from horarium.model.notifications import (
    EVENTS,
    FORMATS,
    MAX_ADDRESS,
    MAX_NOTIFICATIONS,
    MAX_RECIPIENTS,
    MAX_SECRET,
    MAX_URI,
    PAGERDUTY_URI,
    RESOLVES,
    TRIGGERS,
)

SPEC = Path(__file__).with_name("scheduler-2016-03-01.json")

_ERROR = {
    "type": "object",
    "description": "ARM error body (every failure).",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        }
    },
}
_UPCOMING = {
    "type": "object",
    "properties": {
        "executionTime": {"type": "string", "format": "date-time", "description": "UTC"},
        "localTime": {"type": "string", "description": "The instant in the job's time zone."},
        "timeZone": {"type": "string"},
        "utcOffset": {"type": "string", "examples": ["+02:00"]},
        "daylightSavingTime": {"type": "boolean"},
        "scheduledLocalTime": {
            "type": "string",
            "description": "The wall-clock time the schedule asked for.",
        },
        "movedBySpringForward": {
            "type": "boolean",
            "description": "The asked-for time did not exist; it runs at localTime.",
        },
        "mergedByFallBack": {
            "type": "boolean",
            "description": "The asked-for time occurred twice (it runs once), or two asked-for"
            " times name this instant.",
        },
        "scheduledExecutionTime": {
            "type": "string",
            "format": "date-time",
            "description": "UTC instant the schedule named; executionTime is later by"
            " jitterOffset when the recurrence has a jitter.",
        },
        "jitterOffset": {"type": "string", "description": "TimeSpan, 00:00:00 without jitter."},
        "repeatCount": {"type": "integer"},
    },
}
_RECURRENCE_EXTENSIONS = {
    "cron": {
        "type": "string",
        "description": "Horarium extension: a 5-field cron expression (minute hour day-of-month"
        " month day-of-week; ranges, steps, lists, names, @hourly-style macros, L, W, #) read"
        " on the clock of timeZone; instead of frequency, interval and schedule. Six fields"
        " (NCRONTAB, the second first, as Azure Functions timers) are accepted too; a job that"
        " runs more often than every minute needs a collection on the Seconds plan.",
        "examples": ["*/15 9-17 * * MON-FRI", "0 6 L * *", "@daily", "*/10 * * * * *"],
    },
    "jitter": {
        "type": "string",
        "description": "Horarium extension: TimeSpan or ISO 8601 duration; each execution"
        " starts a deterministic offset in [0, jitter) after the instant the schedule names"
        " (at most the recurrence's shortest gap). GET …/upcoming shows the real instants.",
        "examples": ["00:05:00", "PT5M"],
    },
}


_FAILURE = {
    "type": "object",
    "description": "A history entry (JobHistoryDefinition) with its job's id and state.",
    "properties": {
        "id": {"type": "string"},
        "type": {"type": "string"},
        "name": {"type": "string"},
        "properties": {
            "allOf": [{"$ref": "#/components/schemas/JobHistoryDefinitionProperties"}],
            "properties": {
                "jobId": {"type": "string", "description": "The ARM id of the job."},
                "jobState": {"type": "string", "description": "The job's state now."},
                "finalAttempt": {
                    "type": "boolean",
                    "description": "Failed entries only: the last attempt the job's retry"
                    " policy (now) allows, so no retry follows (for the main action, the"
                    " execution faulted).",
                },
            },
        },
    },
}
_COUNT = {"type": "integer", "minimum": 0}
_OUTCOMES = {
    "type": "object",
    "description": "Horarium extension: every job of a collection with its newest history"
    " entries (at most `count`, 1..20, default 10; newest first; messages cut to 300"
    " characters), jobs by name.",
    "properties": {
        "value": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string", "description": "collection/job"},
                    "outcomes": {
                        "type": "array",
                        "items": {"$ref": "#/components/schemas/JobHistoryDefinition"},
                    },
                },
            },
        }
    },
}

_ENGINE = {
    "type": "object",
    "description": "What the scheduler processes sharing the database are doing.",
    "properties": {
        "time": {"type": "string", "format": "date-time"},
        "executionsPerMinute": {
            "type": "array",
            "description": "History entries by end minute over the last hour, oldest first.",
            "items": {
                "type": "object",
                "properties": {
                    "minute": {"type": "string", "format": "date-time"},
                    "completed": _COUNT,
                    "failed": _COUNT,
                    "postponed": _COUNT,
                    "skipped": _COUNT,
                },
            },
        },
        "inFlight": {**_COUNT, "description": "Executions held under a live lease."},
        "dueBacklog": {
            "type": "object",
            "description": "Work due now that no live lease holds, in Enabled collections"
            " (what the processes have not claimed yet).",
            "properties": {
                "jobs": _COUNT,
                "executions": _COUNT,
                "oldestDueTime": {"type": ["string", "null"], "format": "date-time"},
                "heldByCollections": {
                    "type": "object",
                    "description": "Due work of collections that are not Enabled: no process"
                    " claims it until the collection is enabled (not counted above).",
                    "properties": {"jobs": _COUNT, "executions": _COUNT},
                },
            },
        },
        "eventLoopLag": {
            "type": "number",
            "description": "Seconds: the worst delay of the answering process's event loop over"
            " the last 10 s (the gauge horarium_event_loop_lag_seconds).",
        },
        "processes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "owner": {"type": "string", "description": "host:pid:random"},
                    "jobs": _COUNT,
                    "executions": _COUNT,
                    "inFlight": _COUNT,
                    "leaseExpiresAt": {"type": "string", "format": "date-time"},
                },
            },
        },
    },
}

_BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "An API key (`horarium keys create`; the first is in <data-dir>/admin-token)"
    " or, when --oidc-issuer is set, a JWT of that issuer.",
}


def _add_seconds(schemas: dict[str, Any]) -> None:
    """Horarium's extensions finer than a minute: `frequency` Second (and Year), the
    Seconds plan."""
    frequency = schemas["JobRecurrence"]["properties"]["frequency"]
    frequency["enum"] = ["Second", *frequency["enum"], "Year"]
    frequency["description"] = (
        "Minute to Month as in Azure; Horarium extensions: Second (only on a collection of the"
        " Seconds plan) and Year (12 months)."
    )
    sku = schemas["Sku"]["properties"]["name"]
    sku["enum"] = [*sku["enum"], "Seconds"]
    sku["description"] = (
        "Azure's plans, and Horarium's Seconds plan: 1000 jobs, recurrences as often as every"
        " second (frequency Second, six-field cron)."
    )


@cache
def azure_schemas() -> dict[str, Any]:
    """The spec's definitions as OpenAPI 3 component schemas."""
    spec = json.loads(SPEC.read_text(encoding="utf-8"))
    text = json.dumps(spec["definitions"]).replace("#/definitions/", "#/components/schemas/")
    schemas: dict[str, Any] = json.loads(text)
    # Swagger 2 polymorphism (discriminator + allOf) as an OpenAPI 3 oneOf.
    base = schemas["HttpAuthentication"]
    base.pop("discriminator", None)
    mapping: dict[str, str] = {}
    for name, schema in list(schemas.items()):
        value = schema.get("x-ms-discriminator-value")
        if value is None:
            continue
        properties = {**base["properties"], **schema.get("properties", {})}
        properties["type"] = {**base["properties"]["type"], "enum": [value]}
        schemas[name] = {
            "type": "object",
            "required": ["type"],
            "properties": properties,
            "x-ms-discriminator-value": value,
        }
        mapping[value] = f"#/components/schemas/{name}"
    schemas["HttpAuthenticationNotSpecified"] = {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string", "enum": ["NotSpecified"]}},
    }
    mapping["NotSpecified"] = "#/components/schemas/HttpAuthenticationNotSpecified"
    schemas["HttpAuthentication"] = {
        "description": base.get("description", "HTTP outbound authentication"),
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "type", "mapping": mapping},
    }
    schemas["JobRecurrence"]["properties"]["timeZone"] = {
        "type": "string",
        "description": "Horarium extension: IANA (Europe/Berlin) or Windows (W. Europe Standard"
        " Time) time zone of the schedule; absent: UTC.",
    }
    _add_execution_extensions(schemas)
    schemas["JobRecurrence"]["properties"].update(_RECURRENCE_EXTENSIONS)
    _add_seconds(schemas)
    _add_pause(schemas)
    _add_notifications(schemas)
    _add_execution_policy(schemas)
    schemas["ErrorResponse"] = _ERROR
    schemas["UpcomingExecution"] = _UPCOMING
    schemas["UpcomingExecutionList"] = {
        "type": "object",
        "properties": {
            "scheduleDescription": {
                "type": "string",
                "description": "The job's schedule in plain English (docs/recurrence.md §11).",
            },
            "value": {"type": "array", "items": {"$ref": "#/components/schemas/UpcomingExecution"}},
            "nextLink": {"type": ["string", "null"]},
        },
    }
    _add_upcoming_policy(schemas)
    schemas["FailureEntry"] = _FAILURE
    schemas["FailureListResult"] = {
        "type": "object",
        "properties": {
            "value": {"type": "array", "items": {"$ref": "#/components/schemas/FailureEntry"}},
            "nextLink": {"type": ["string", "null"]},
        },
    }
    schemas["JobOutcomesListResult"] = _OUTCOMES
    schemas["EngineStatus"] = _ENGINE
    add_calendar_schemas(schemas)
    add_timeline_schemas(schemas)
    add_monitor_schemas(schemas)
    return schemas


def _add_execution_extensions(schemas: dict[str, Any]) -> None:
    """Exponential backoff in `RetryPolicy`, payload templates on `JobAction`."""
    retry = schemas["RetryPolicy"]["properties"]
    retry["retryType"]["enum"] = [*retry["retryType"]["enum"], "Exponential"]
    retry["retryType"]["description"] = (
        "Gets or sets the retry strategy to be used. Horarium extension: Exponential waits"
        " retryInterval, then twice as long each retry, at most maxRetryInterval, each wait"
        " varied by up to ±10 %."
    )
    retry["maxRetryInterval"] = {
        "type": "string",
        "format": "duration",
        "description": "Horarium extension, only with retryType Exponential: the longest wait"
        " (TimeSpan or ISO 8601; at least retryInterval, at most 548 days); absent: one day,"
        " or retryInterval when that is longer.",
    }
    schemas["JobAction"]["properties"]["templated"] = {
        "type": "boolean",
        "description": "Horarium extension: fill the placeholders {{scheduledTime}},"
        " {{executionTime}}, {{executionTag}}, {{attempt}}, {{jobName}} and {{collectionName}}"
        " in request.uri (percent-encoded), request.body and message (JSON- or XML-escaped by"
        " the content type), header values, and queue messages, of the action and its"
        " errorAction. Unknown placeholders are refused. Absent or false: sent as written.",
    }


def _add_pause(schemas: dict[str, Any]) -> None:
    """`properties.pause` of jobs and collections."""
    schemas["Pause"] = {
        "type": "object",
        "required": ["until"],
        "description": "Horarium extension: only on a Disabled job or collection, which the"
        " engine enables again by itself at `until`; the executions that fell due during the"
        " pause are decided as missed ones (the latest runs once, the others are Postponed)."
        " Enabling it earlier ends the pause.",
        "properties": {
            "until": {"type": "string", "format": "date-time"},
            "reason": {"type": "string", "maxLength": 500},
        },
    }
    pause = {"$ref": "#/components/schemas/Pause"}
    schemas["JobProperties"]["properties"]["pause"] = pause
    schemas["JobCollectionProperties"]["properties"]["pause"] = pause


def _add_notifications(schemas: dict[str, Any]) -> None:
    """`properties.notifications` of collections."""
    schemas["JobCollectionNotification"] = {
        "type": "object",
        "required": ["events"],
        "description": "Horarium extension: a channel the engine sends each listed event of"
        " the collection's jobs and monitors to, retried with back-off, at least once"
        " (docs/engine.md, Notifications). format horarium (the default; uri and secret"
        " required): the event's JSON POSTed to `uri`, signed in the header"
        " x-horarium-signature: sha256=<hex HMAC-SHA256 of the body under `secret`>"
        " (deduplicate by the body's `id`). slack / teams (uri required): a message POSTed to"
        " the incoming-webhook URL `uri`, which is a secret: shown as its origin and /***, and"
        " kept when sent back so (or left out). pagerduty (routingKey required): an Events API"
        " v2 event, trigger or resolve, one dedup_key per job or monitor. email (email.to"
        " required; needs the service's --smtp-url): one mail per event, text and HTML.",
        "properties": {
            "format": {
                "type": "string",
                "enum": list(FORMATS),
                "default": "horarium",
                "description": "Absent: horarium, or email when `email` is given. GET shows"
                " it except for horarium.",
            },
            "events": {
                "type": "array",
                "minItems": 1,
                "uniqueItems": True,
                "items": {"type": "string", "enum": list(EVENTS)},
                "description": "ExecutionFaulted: an execution's main action failed its last"
                " allowed attempt; JobFaulted: the job became Faulted; ExecutionPostponed:"
                " missed executions were not run; ExecutionSkipped: an execution was not run"
                " (executionPolicy.overlap Skip); JobRecovered: the job's main action succeeded"
                " after a fault; MonitorLate, MonitorDown, MonitorUp: a check-in monitor"
                " became Late, Down, or Up again (docs/monitors.md); ExecutionLate: an execution"
                " had not started executionPolicy.deadlines.startWithin after its expected time;"
                " ExecutionOverran: one had not finished deadlines.finishWithin after its first"
                " attempt's start (docs/engine.md, Deadlines).",
            },
            "uri": {
                "type": "string",
                "maxLength": MAX_URI,
                "description": "An absolute http(s) URI: where format horarium POSTs; the"
                " incoming-webhook URL of slack and teams (returned as its origin and /***);"
                f" pagerduty's endpoint (default {PAGERDUTY_URI}). Not taken by email.",
            },
            "secret": {
                "type": "string",
                "writeOnly": True,
                "maxLength": MAX_SECRET,
                "description": "format horarium: the HMAC key. Never returned. Left out (or"
                " ***) in a PUT or PATCH: the stored one of the notification with the same uri"
                " is kept.",
            },
            "routingKey": {
                "type": "string",
                "writeOnly": True,
                "maxLength": MAX_SECRET,
                "description": "format pagerduty: the integration's routing key; kept as"
                " `secret` is. Such a channel takes only the events "
                + ", ".join(TRIGGERS)
                + " (event_action trigger) and "
                + ", ".join(RESOLVES)
                + " (resolve).",
            },
            "email": {
                "type": "object",
                "required": ["to"],
                "description": "format email: the recipients (the service's --smtp-url and"
                " --smtp-from send it).",
                "properties": {
                    "to": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_RECIPIENTS,
                        "uniqueItems": True,
                        "items": {"type": "string", "format": "email", "maxLength": MAX_ADDRESS},
                    }
                },
            },
        },
    }
    schemas["JobCollectionProperties"]["properties"]["notifications"] = {
        "type": "array",
        "maxItems": MAX_NOTIFICATIONS,
        "items": {"$ref": "#/components/schemas/JobCollectionNotification"},
    }


_DEADLINE_TEXT = " (TimeSpan or ISO 8601, more than 0, at most 7 days)"
_DEADLINES = {
    "type": "object",
    "description": "Deadlines whose breach is notified to the collection's notifications that"
    " list the event, once per execution (docs/engine.md, Deadlines); at least one of the two."
    " Absent: none watched.",
    "properties": {
        "startWithin": {
            "type": "string",
            "format": "duration",
            "description": "An execution not started this long after its expected time (held"
            " back: the engine's slots full, no engine running) raises ExecutionLate"
            + _DEADLINE_TEXT
            + ".",
        },
        "finishWithin": {
            "type": "string",
            "format": "duration",
            "description": "An execution not finished this long after its first attempt's"
            " start, retries and the error action included, raises ExecutionOverran"
            + _DEADLINE_TEXT
            + ".",
        },
    },
}


def _add_execution_policy(schemas: dict[str, Any]) -> None:
    """`executionPolicy` on `JobProperties`, the `Skipped` history status, the backfill body and
    answer (docs/engine.md, "Execution policy" and "Backfill")."""
    schemas["JobProperties"]["properties"]["executionPolicy"] = {
        "type": "object",
        "description": "Horarium extension; absent: Azure Scheduler's behaviour.",
        "properties": {
            "overlap": {
                "type": "string",
                "enum": ["Allow", "Skip", "BufferOne"],
                "description": "An execution due while the job's previous one (its retries and"
                " error action included) is unfinished: Allow (default) runs it; Skip does not"
                " (history status Skipped, with the reason); BufferOne runs it as soon as the"
                " previous one ends, and skips further ones meanwhile.",
            },
            "missed": {
                "type": "string",
                "enum": ["RunLatest", "RunAll", "Skip"],
                "description": "Executions found more than the grace period late: RunLatest"
                " (default) runs the latest once and records the others Postponed; RunAll runs"
                " every one inside catchUpWindow, oldest first, each with its own expected time;"
                " Skip records them all Postponed and runs none.",
            },
            "catchUpWindow": {
                "type": "string",
                "format": "duration",
                "description": "RunAll: how far back missed executions still run (TimeSpan or"
                " ISO 8601, more than 0, at most 366 days); absent: one day.",
            },
            "deadlines": _DEADLINES,
        },
    }
    status = schemas["JobExecutionStatus"]
    status["enum"] = [*status.get("enum", []), "Skipped"]
    schemas["BackfillRequest"] = {
        "type": "object",
        "required": ["from", "to"],
        "properties": {
            "from": {"type": "string", "format": "date-time", "description": "Inclusive."},
            "to": {"type": "string", "format": "date-time", "description": "Exclusive."},
        },
    }
    schemas["BackfillResult"] = {
        "type": "object",
        "properties": {
            "from": {"type": "string", "format": "date-time"},
            "to": {"type": "string", "format": "date-time"},
            "queued": {"type": "integer", "description": "Executions queued (at most 1,000)."},
        },
    }


def _add_upcoming_policy(schemas: dict[str, Any]) -> None:
    """The job's `executionPolicy` (defaults filled in) beside its upcoming executions, and the
    marks of a stored job's executions already due that no process has run yet."""
    listing = schemas["UpcomingExecutionList"]["properties"]
    listing["executionPolicy"] = {
        **schemas["JobProperties"]["properties"]["executionPolicy"],
        "description": "The job's executionPolicy, its defaults filled in (absent when the job"
        " has none). Overlap depends on how long executions take: no execution is marked for"
        " it.",
    }
    upcoming = schemas["UpcomingExecution"] = dict(schemas["UpcomingExecution"])
    upcoming["properties"] = {
        **upcoming["properties"],
        "overdue": {
            "type": "boolean",
            "description": "A stored job's execution due before now that no process has run"
            " yet (the service was down or is behind); absent otherwise.",
        },
        "ifMissed": {
            "type": "string",
            "enum": ["Runs", "Postponed"],
            "description": "On an overdue execution: what the job's executionPolicy.missed does"
            " with it once the engine finds it more than its grace period late (one found"
            " sooner simply runs late).",
        },
    }


def install(app: FastAPI) -> None:
    """Serve the document above at `app.openapi_url`."""

    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        document = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        schemas.update(azure_schemas())
        document["components"]["securitySchemes"] = {"bearer": _BEARER}
        document["security"] = [{"bearer": []}]
        error = {
            "description": "ARM error",
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}
            },
        }
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                responses = operation.setdefault("responses", {})
                responses.pop("422", None)
                responses["default"] = error
        app.openapi_schema = document
        return document

    app.openapi = build  # type: ignore[method-assign]
