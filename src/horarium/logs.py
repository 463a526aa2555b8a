"""Logging of `horarium serve` and `horarium worker`: one handler on stderr for every logger
(Horarium's, uvicorn's, Python warnings), in one of two formats (`--log-format`):

    text  2026-11-23T19:40:00.123Z INFO horarium.audit api.write {"principal": "ci", ...}
    json  {"ts": "2026-11-23T19:40:00.123Z", "level": "info", "logger": "horarium.audit",
           "event": "api.write", "principal": "ci", ...}

A structured event (`event`) has a name and fields: in text its fields follow as one JSON object;
in JSON they are keys of the line's object. A plain record's `event` is its message. A record's
exception goes in `exception` (JSON) or on the lines after it (text). Start-up lines
(`announce`, `warn`) are printed as they are under text, and are events under JSON, so that every
line of a JSON log is one object.

Nothing secret is logged: callers pass names, never tokens, keys or passwords (the database URL
is shown without its password); a check-in's path is shown without its ping token."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Mapping
from typing import Any

FORMATS = ("text", "json")
LEVELS = ("debug", "info", "warning", "error")

_EVENT = "horarium_event"  # LogRecord attributes of an event: its name and fields
_FIELDS = "horarium_fields"

_format = "text"

# A check-in's path holds its monitor's ping token: access lines show `/ping/***` instead.
_PING_TOKEN = re.compile(r"^(/ping/)[^/?#]+", re.IGNORECASE)


def redact_path(path: str) -> str:
    """`path` as a log may show it (a check-in's token hidden)."""
    return _PING_TOKEN.sub(r"\1***", path)


class _RedactAccess(logging.Filter):
    """uvicorn's access lines, their path passed through `redact_path`."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            path = args[2]
            if isinstance(path, str):
                record.args = (args[0], args[1], redact_path(path), args[3], args[4])
        return True


def event(logger: logging.Logger, level: int, name: str, /, **fields: Any) -> None:
    """Log event `name` with `fields` (JSON-serialisable values) at `level`."""
    if logger.isEnabledFor(level):
        logger.log(level, name, extra={_EVENT: name, _FIELDS: fields})


def _timestamp(record: logging.LogRecord) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
    return f"{seconds}.{int(record.msecs):03d}Z"


def _fields(record: logging.LogRecord) -> Mapping[str, Any]:
    fields: Mapping[str, Any] = getattr(record, _FIELDS, None) or {}
    if record.name == "uvicorn.access" and isinstance(record.args, tuple):
        if len(record.args) == 5:  # uvicorn's access line: client, method, path, version, status
            client, method, path, _, status = record.args
            return {"client": client, "method": method, "path": path, "status": status}
    return fields


def _name(record: logging.LogRecord) -> str:
    if record.name == "uvicorn.access" and _fields(record):
        return "http.request"
    return str(getattr(record, _EVENT, None) or record.getMessage())


class TextFormatter(logging.Formatter):
    """`<ts> <LEVEL> <logger> <message>`, an event's fields after it as one JSON object."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        fields = getattr(record, _FIELDS, None)
        if fields is not None:
            message = f"{message} {json.dumps(fields, ensure_ascii=False, default=str)}"
        line = f"{_timestamp(record)} {record.levelname} {record.name} {message}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, event, the event's fields, exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": _name(record),
        }
        entry.update(_fields(record))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def setup(log_format: str = "text", level: str = "info") -> None:
    """Send every logger to one stderr handler in `log_format`; Horarium's loggers at `level`,
    uvicorn's at INFO or above, everything else at WARNING or above."""
    global _format
    if log_format not in FORMATS:
        raise ValueError(f"log format: {log_format!r} is not one of {', '.join(FORMATS)}")
    _format = log_format
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(_RedactAccess())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    chosen = logging.getLevelName(level.upper())
    logging.getLogger("horarium").setLevel(chosen)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "uvicorn.asgi"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
        logger.setLevel(max(chosen, logging.INFO))
    logging.captureWarnings(True)


def is_json() -> bool:
    return _format == "json"


_startup = logging.getLogger("horarium.startup")


def announce(text: str, name: str, /, **fields: Any) -> None:
    """A start-up line for the operator: `text` on stdout (text format), or event `name` with
    `fields` and the text as `message` (JSON)."""
    if _format == "json":
        event(_startup, logging.INFO, name, message=text, **fields)
    else:
        print(text, flush=True)


def warn(text: str, label: str = "Warning") -> None:
    """A start-up warning (a setting that weakens security, say): `<label>: text` on stderr,
    or a `startup.warning` event."""
    if _format == "json":
        event(_startup, logging.WARNING, "startup.warning", message=text)
    else:
        print(f"{label}: {text}", file=sys.stderr, flush=True)
