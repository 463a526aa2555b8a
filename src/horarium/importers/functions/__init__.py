"""Azure Functions timer triggers and WebJob schedules read into jobs (`project` finds them).

    found = read_functions(folder, {"SETTING": "value"}, ("rg", "collection"), target=None)

Each timer becomes a job of the same name whose recurrence is the schedule: a six-field NCRONTAB
`cron` (seconds first), or a TimeSpan (`00:05:00`) as `frequency` and `interval`, on the clock
of `WEBSITE_TIME_ZONE` when the settings give one. The job POSTs:

- with `target`, to that URL (`{name}` in it becomes the timer's name);
- a function, to the host's admin endpoint `…/admin/functions/NAME` with `{"input": ""}`: on
  `https://WEBSITE_HOSTNAME` when that setting is given, with the master key from the setting
  `FUNCTIONS_MASTER_KEY` as `x-functions-key` (without it the job needs its secret); otherwise on
  the local host `http://localhost:7071`, which asks for no key;
- a WebJob, to Kudu's `https://WEBSITE_SITE_NAME.scm.azurewebsites.net/api/triggeredwebjobs/
  NAME/run` with Basic authentication (`$SITE`, the password from `KUDU_PASSWORD`; without it
  the job needs its secret); without the site name a WebJob needs `target`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horarium.importers.documents import Document, SourceError
from horarium.importers.functions.project import Timer, read_project
from horarium.model.secrets import MASK

LOCAL_HOST = "http://localhost:7071"  # `func start`'s default
TIMESPAN = re.compile(r"^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})$")
UNITS = (("Day", 86_400), ("Hour", 3600), ("Minute", 60), ("Second", 1))
MAX_INTERVAL = 1000  # recurrence's bound for Second, Minute and Hour
KEY_SETTING = "FUNCTIONS_MASTER_KEY"
KUDU_SETTING = "KUDU_PASSWORD"


@dataclass(frozen=True)
class ImportedTimer:
    document: Document
    not_carried: list[str]


def read_functions(
    folder: Path, sets: Mapping[str, str], where: tuple[str, str], target: str | None
) -> list[ImportedTimer]:
    """The jobs of every timer under `folder`, into `where` (resource group, collection)."""
    project = read_project(folder, sets)
    return [_job(timer, project.settings, where, target) for timer in project.timers]


def _job(
    timer: Timer, settings: Mapping[str, str], where: tuple[str, str], target: str | None
) -> ImportedTimer:
    recurrence = recurrence_of(timer.schedule, timer.path)
    zone = settings.get("WEBSITE_TIME_ZONE")
    if zone:
        recurrence["timeZone"] = zone
    action, hint = _action(timer, settings, target)
    properties: dict[str, Any] = {"action": action, "recurrence": recurrence}
    if timer.disabled:
        properties["state"] = "Disabled"
    group, collection = where
    document = Document("job", group, (collection, timer.name), {"properties": properties}, hint)
    return ImportedTimer(document, timer.not_carried)


def recurrence_of(schedule: str, path: Path) -> dict[str, Any]:
    """A TimeSpan as frequency and interval (the largest whole unit); anything else as cron
    (the API checks it)."""
    span = TIMESPAN.match(schedule)
    if span is None:
        return {"cron": schedule}
    days, hours, minutes, seconds = (int(part or 0) for part in span.groups())
    if minutes > 59 or seconds > 59:
        raise SourceError(f"{path}: schedule {schedule!r} is not a TimeSpan (hh:mm:ss)")
    total = days * 86_400 + hours * 3600 + minutes * 60 + seconds
    if total == 0:
        raise SourceError(f"{path}: schedule {schedule!r} is zero")
    for frequency, size in UNITS:
        if total % size == 0 and total // size <= MAX_INTERVAL:
            return {"frequency": frequency, "interval": total // size}
    raise SourceError(
        f"{path}: schedule {schedule!r} is not at most {MAX_INTERVAL} of one unit (seconds,"
        " minutes, hours or days), which a recurrence needs"
    )


def _action(
    timer: Timer, settings: Mapping[str, str], target: str | None
) -> tuple[dict[str, Any], str]:
    """The POST and what gives its secret when it has one."""
    request: dict[str, Any] = {"method": "POST"}
    hint = "the project does not give it"
    if target is not None:
        request["uri"] = target.replace("{name}", timer.name)
    elif timer.kind == "function":
        host = settings.get("WEBSITE_HOSTNAME")
        base = f"https://{host}" if host else LOCAL_HOST
        request["uri"] = f"{base}/admin/functions/{timer.name}"
        request["body"] = json.dumps({"input": ""})
        headers = {"Content-Type": "application/json"}
        if host:
            headers["x-functions-key"] = settings.get(KEY_SETTING) or MASK
            hint = f"the host's master key: --set {KEY_SETTING}=…"
        request["headers"] = headers
    else:
        site = settings.get("WEBSITE_SITE_NAME")
        if not site:
            raise SourceError(
                f"{timer.path}: a WebJob is run through its site's Kudu: --set"
                " WEBSITE_SITE_NAME=… or --target URL"
            )
        request["uri"] = (
            f"https://{site}.scm.azurewebsites.net/api/triggeredwebjobs/{timer.name}/run"
        )
        auth: dict[str, Any] = {"type": "Basic", "username": f"${site}"}
        if settings.get(KUDU_SETTING):
            auth["password"] = settings[KUDU_SETTING]
        request["authentication"] = auth
        hint = f"the site's deployment password: --set {KUDU_SETTING}=…"
    kind = "Https" if str(request["uri"]).lower().startswith("https:") else "Http"
    return {"type": kind, "request": request}, hint


__all__ = ["ImportedTimer", "SourceError", "read_functions", "recurrence_of"]
