"""`azurerm_scheduler_job_collection` and `azurerm_scheduler_job` (azurerm provider 1.x, removed
in 2.0) as the PUT bodies of Horarium's API, as the provider built its requests
(`docs/migrating.md` has the table):

- a collection: `location`, `tags`, `sku`, `state`, `quota` (`max_job_count`,
  `max_recurrence_frequency`, `max_recurrence_interval` or its old name `max_retry_interval`);
- a job: `action_web` (type Https when the url is https, else Http; the method upper-cased;
  `headers`, `body`, one of `authentication_basic` / `_certificate` / `_active_directory`) or
  `action_storage_queue`; the same two as `error_action_*`; `retry` (Fixed, its defaults
  `00:00:30` and 4; no block: retry type None, as the provider sent); `recurrence`
  (`frequency`, `interval`, `count`, `end_time`, `minutes`, `hours`, `week_days`,
  `month_days`, `monthly_occurrences`); `start_time`; `state` (Enabled, Disabled; Completed,
  which the service set when the series ended, is sent as Disabled so that importing does
  not run a one-time job again; Faulted is not sent). Terraform has no time zone: UTC.

A sensitive value the state or plan does not show (empty, or known only after apply) is left
out: the job is then not created until it is given (`--set ADDRESS.PATH=VALUE`)."""

from __future__ import annotations

from typing import Any

from horarium.importers.documents import Document, SourceError
from horarium.importers.terraform.show import COLLECTION_TYPE, TfResource

WEB_SECRETS = (
    ("authentication_basic", "password"),
    ("authentication_certificate", "pfx"),
    ("authentication_certificate", "password"),
    ("authentication_active_directory", "secret"),
)
DEFAULT_AUDIENCE = "https://management.core.windows.net/"  # the provider's default
STATES = {"enabled": "Enabled", "disabled": "Disabled", "completed": "Disabled"}


def document(resource: TfResource, group: str | None, kind: str) -> Document:
    """The resource as a `Document` in `group` (None: its own `resource_group_name`)."""
    if resource.type == COLLECTION_TYPE:
        names: tuple[str, ...] = (_required(resource, "name"),)
        body = _collection(resource)
        return Document("collection", group or _group(resource), names, body)
    names = (_required(resource, "job_collection_name"), _required(resource, "name"))
    body, missing = _job(resource)
    sets = " ".join(f"--set '{resource.address}.{path}=…'" for path in missing)
    hint = f"the {kind} does not show it: {sets}" if missing else "the source does not show it"
    return Document("job", group or _group(resource), names, body, hint)


def _group(resource: TfResource) -> str:
    return _required(resource, "resource_group_name", " (or give --resource-group)")


def _required(resource: TfResource, name: str, more: str = "") -> str:
    value = _text(resource.values, name)
    if value is None:
        if name in resource.unknown:
            raise SourceError(f"{resource.address}: {name} is known only after apply{more}")
        raise SourceError(f"{resource.address}: {name} is required{more}")
    return value


def _collection(resource: TfResource) -> dict[str, Any]:
    values = resource.values
    properties: dict[str, Any] = {"sku": {"name": _required(resource, "sku")}}
    if (state := _text(values, "state")) is not None:
        properties["state"] = state
    quota = _block(values, "quota")
    if quota is not None:
        out: dict[str, Any] = {}
        if (count := quota.get("max_job_count")) is not None:
            out["maxJobCount"] = count
        frequency = _text(quota, "max_recurrence_frequency")
        interval = quota.get("max_recurrence_interval") or quota.get("max_retry_interval")
        if frequency is not None or interval is not None:
            out["maxRecurrence"] = _present({"frequency": frequency, "interval": interval})
        properties["quota"] = out
    body: dict[str, Any] = {"location": _required(resource, "location"), "properties": properties}
    if isinstance(values.get("tags"), dict) and values["tags"]:
        body["tags"] = values["tags"]
    return body


def _job(resource: TfResource) -> tuple[dict[str, Any], list[str]]:
    """The body, and the paths of the sensitive values it lacks."""
    values, missing = resource.values, []
    action = _action(resource, "")
    if action is None:
        raise SourceError(f"{resource.address}: one of action_web or action_storage_queue")
    missing += action[1]
    body = action[0]
    error = _action(resource, "error_")
    if error is not None:
        body["errorAction"] = error[0]
        missing += error[1]
    retry = _block(values, "retry")
    if retry is None:
        body["retryPolicy"] = {"retryType": "None"}
    else:
        body["retryPolicy"] = {
            "retryType": "Fixed",
            "retryInterval": _text(retry, "interval") or "00:00:30",
            "retryCount": retry.get("count") or 4,
        }
    properties: dict[str, Any] = {"action": body}
    if (start := _text(values, "start_time")) is not None:
        properties["startTime"] = start
    recurrence = _block(values, "recurrence")
    if recurrence is not None:
        properties["recurrence"] = _recurrence(recurrence)
    state = STATES.get((_text(values, "state") or "").lower())
    if state is not None:
        properties["state"] = state
    return {"properties": properties}, missing


def _action(resource: TfResource, prefix: str) -> tuple[dict[str, Any], list[str]] | None:
    web = _block(resource.values, f"{prefix}action_web")
    if web is not None:
        return _web(resource, web, f"{prefix}action_web.0")
    queue = _block(resource.values, f"{prefix}action_storage_queue")
    if queue is None:
        return None
    where = f"{prefix}action_storage_queue.0"
    message = {
        "storageAccount": _text(queue, "storage_account_name"),
        "queueName": _text(queue, "storage_queue_name"),
        "message": _text(queue, "message"),
    }
    missing = []
    if (token := _text(queue, "sas_token")) is not None:
        message["sasToken"] = token
    else:
        missing.append(f"{where}.sas_token")
    return {"type": "StorageQueue", "queueMessage": _present(message)}, missing


def _web(resource: TfResource, web: dict[str, Any], where: str) -> tuple[dict[str, Any], list[str]]:
    url = _text(web, "url")
    if url is None:
        raise SourceError(f"{resource.address}: {where}.url is required")
    request: dict[str, Any] = {"uri": url, "method": (_text(web, "method") or "GET").upper()}
    if isinstance(web.get("headers"), dict) and web["headers"]:
        request["headers"] = web["headers"]
    if (body := _text(web, "body")) is not None:
        request["body"] = body
    missing: list[str] = []
    auth = _authentication(web, where, missing)
    if auth is not None:
        request["authentication"] = auth
    kind = "Https" if url.lower().startswith("https://") else "Http"
    return {"type": kind, "request": request}, missing


def _authentication(web: dict[str, Any], where: str, missing: list[str]) -> dict[str, Any] | None:
    basic = _block(web, "authentication_basic")
    certificate = _block(web, "authentication_certificate")
    directory = _block(web, "authentication_active_directory")
    if basic is not None:
        auth: dict[str, Any] = {"type": "Basic", "username": _text(basic, "username")}
        block = "authentication_basic"
    elif certificate is not None:
        auth, block = {"type": "ClientCertificate"}, "authentication_certificate"
    elif directory is not None:
        auth = {
            "type": "ActiveDirectoryOAuth",
            "tenant": _text(directory, "tenant_id"),
            "clientId": _text(directory, "client_id"),
            "audience": _text(directory, "audience") or DEFAULT_AUDIENCE,
        }
        block = "authentication_active_directory"
    else:
        return None
    held = _block(web, block) or {}
    for name in (n for b, n in WEB_SECRETS if b == block):
        value = _text(held, name)
        if value is not None:
            auth[name] = value
        elif not (block == "authentication_certificate" and name == "password"):
            missing.append(f"{where}.{block}.0.{name}")
    return _present(auth)


def _recurrence(block: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "frequency": _text(block, "frequency"),
        "interval": block.get("interval") or 1,
        "count": block.get("count") or None,
        "endTime": _text(block, "end_time"),
    }
    schedule: dict[str, Any] = {}
    for name, field in (("minutes", "minutes"), ("hours", "hours"), ("month_days", "monthDays")):
        if block.get(name):
            schedule[field] = sorted(block[name])
    if block.get("week_days"):
        schedule["weekDays"] = [str(day).capitalize() for day in block["week_days"]]
    occurrences = block.get("monthly_occurrences")
    if occurrences:
        schedule["monthlyOccurrences"] = [
            {"day": str(o.get("day", "")).capitalize(), "occurrence": o.get("occurrence")}
            for o in occurrences
            if isinstance(o, dict)
        ]
    if schedule:
        out["schedule"] = schedule
    return _present(out)


def _block(values: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The first (only) object of a nested block (`[{…}]`), or None when it is absent."""
    value = values.get(name)
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return value[0]
    return None


def _text(values: dict[str, Any], name: str) -> str | None:
    """A string attribute; None when null, empty or absent (SDKv2 states write "" for unset)."""
    value = values.get(name)
    if value is None or value == "":
        return None
    return str(value)


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}
