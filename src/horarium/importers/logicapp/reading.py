"""A Logic Apps workflow whose trigger is `Recurrence` and whose first action is `Http`, read
into one job's PUT body, with the list of every part the job cannot carry.

The recurrence is the same model as Horarium's (`frequency`, `interval`, `startTime`,
`endTime`, `timeZone` with Windows names, `schedule`); `startTime` moves from the recurrence to
the job. The Http action's `method`, `uri` (with `queries` appended), `headers`, `body` (an
object or array as JSON, with `Content-Type: application/json` unless a content type is given),
`authentication` (Basic, ClientCertificate, ActiveDirectoryOAuth) and `retryPolicy` (none,
fixed, exponential) are carried.

Expressions: `@parameters('name')` (a whole value) and `@{parameters('name')}` (inside text)
take the parameter's value from `--set`, the workflow's `parameters` values, then the
definition's `defaultValue`; a secret whose parameter has no value is left out (the job then
needs it). Any other expression cannot be evaluated here: in the recurrence or the uri it stops
the import; elsewhere the value is sent as written and listed."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from horarium.importers.documents import SourceError

RECURRENCE_FIELDS = ("frequency", "interval", "startTime", "endTime", "timeZone", "schedule")
CARRIED_INPUTS = ("method", "uri", "queries", "headers", "body", "authentication", "retryPolicy")
AUTHENTICATIONS = {
    "basic": ("Basic", ("username",), ("password",)),
    "clientcertificate": ("ClientCertificate", (), ("pfx", "password")),
    "activedirectoryoauth": (
        "ActiveDirectoryOAuth",
        ("tenant", "audience", "clientId"),
        ("secret",),
    ),
}
WHOLE_PARAMETER = re.compile(r"^@parameters\('([^']+)'\)$", re.IGNORECASE)
INNER_PARAMETER = re.compile(r"@\{parameters\('([^']+)'\)\}", re.IGNORECASE)
MAX_ACTIONS = 500  # Logic Apps' own limit of actions per workflow


@dataclass
class WorkflowJob:
    """The job's properties, what it cannot carry (one line each), and its secrets' paths
    left out for want of a parameter value (path → parameter)."""

    body: dict[str, Any]
    not_carried: list[str] = field(default_factory=list)
    unseen: dict[str, str] = field(default_factory=dict)


def definition_of(document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The workflow definition in a file (a workflow resource, `{"definition": …}`, or the
    definition itself) and the parameter values the resource gives."""
    properties = document.get("properties")
    holder = properties if isinstance(properties, dict) else document
    definition = holder.get("definition", holder)
    if not isinstance(definition, dict) or "triggers" not in definition:
        raise SourceError("not a Logic Apps workflow definition (it has no 'triggers')")
    values = holder.get("parameters") if holder is not definition else None
    given = {}
    if isinstance(values, dict):
        given = {k: v["value"] for k, v in values.items() if isinstance(v, dict) and "value" in v}
    return definition, given


def read_workflow(document: dict[str, Any], sets: Mapping[str, str]) -> WorkflowJob:
    """The job a workflow schedules; a `SourceError` when it has no Recurrence trigger, its
    first action is not Http, or its schedule or uri is an expression."""
    definition, given = definition_of(document)
    values = _parameters(definition, given, sets)
    job = WorkflowJob({})
    trigger_name, trigger = _trigger(definition, job)
    recurrence = trigger.get("recurrence")
    if not isinstance(recurrence, dict):
        raise SourceError(f"trigger {trigger_name!r}: no 'recurrence'")
    for key in trigger:
        if key.lower() not in ("type", "recurrence", "evaluatedrecurrence", "description"):
            job.not_carried.append(f"trigger {trigger_name!r}: {key}")
    properties: dict[str, Any] = {}
    out: dict[str, Any] = {}
    for key, value in recurrence.items():
        if _expression(value):
            raise SourceError(f"trigger {trigger_name!r}: recurrence.{key} is an expression")
        if key == "startTime":
            properties["startTime"] = value
        elif key in RECURRENCE_FIELDS:
            out[key] = _numbers(value)
        else:
            job.not_carried.append(f"trigger {trigger_name!r}: recurrence.{key}")
    properties["recurrence"] = out
    properties["action"] = _http(definition, job, values)
    job.body = {"properties": properties}
    return job


def _parameters(
    definition: dict[str, Any], given: dict[str, Any], sets: Mapping[str, str]
) -> dict[str, tuple[Any, bool]]:
    """Each parameter's value (None when it has none) and whether it is secure."""
    declared = definition.get("parameters")
    declared = declared if isinstance(declared, dict) else {}
    out: dict[str, tuple[Any, bool]] = {}
    for name, spec in declared.items():
        spec = spec if isinstance(spec, dict) else {}
        secure = str(spec.get("type", "")).lower() in ("securestring", "secureobject")
        value = sets.get(name, given.get(name, spec.get("defaultValue")))
        out[name.lower()] = (value, secure)
    for name in sets:
        if name.lower() not in out:
            raise SourceError(f"--set {name}: the workflow declares no parameter {name!r}")
    return out


def _trigger(definition: dict[str, Any], job: WorkflowJob) -> tuple[str, dict[str, Any]]:
    triggers = definition.get("triggers")
    if not isinstance(triggers, dict):
        raise SourceError("'triggers' is not an object")
    found = None
    for name, trigger in triggers.items():
        if _type(trigger).lower() == "recurrence" and found is None:
            found = (name, trigger)
        else:
            job.not_carried.append(f"trigger {name!r} ({_type(trigger)})")
    if found is None:
        raise SourceError("no Recurrence trigger (a job runs on a schedule)")
    return found


def check_shape(document: dict[str, Any]) -> None:
    """A `SourceError` when the workflow has no Recurrence trigger or its first action is not
    Http: what stops it whatever values its parameters get."""
    definition, _ = definition_of(document)
    _trigger(definition, WorkflowJob({}))
    _first_action(definition)


def _first_action(definition: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The actions and the name of the first (the one that runs after none), an Http action."""
    actions = definition.get("actions")
    if not isinstance(actions, dict) or not actions:
        raise SourceError("no actions")
    if len(actions) > MAX_ACTIONS:
        raise SourceError(f"{len(actions)} actions; a workflow has at most {MAX_ACTIONS}")
    starting = (n for n, a in actions.items() if isinstance(a, dict) and not a.get("runAfter"))
    first = next(starting, None)
    if first is None:
        raise SourceError("no first action (every action runs after another)")
    if _type(actions[first]).lower() != "http":
        raise SourceError(f"the first action {first!r} is {_type(actions[first])}, not Http")
    return actions, first


def _http(
    definition: dict[str, Any], job: WorkflowJob, values: dict[str, tuple[Any, bool]]
) -> dict[str, Any]:
    """The job's action: the first action (Http), and as its error action an Http action that
    runs only after the first has failed (as `export --to logicapp` writes it)."""
    actions, first = _first_action(definition)
    out = _request(first, actions[first], job, values)
    error = None
    for name, other in actions.items():
        after = other.get("runAfter") if isinstance(other, dict) else None
        failed = isinstance(after, dict) and list(after) == [first] and "Failed" in after[first]
        if error is None and failed and _type(other).lower() == "http":
            error = name
            out["errorAction"] = _request(name, other, job, values, "errorAction.")
        elif name != first:
            job.not_carried.append(f"action {name!r} ({_type(other)})")
    return out


def _request(
    name: str,
    action: dict[str, Any],
    job: WorkflowJob,
    values: dict[str, tuple[Any, bool]],
    part: str = "",
) -> dict[str, Any]:
    where = f"action {name!r}"
    for key in action:
        if key.lower() not in ("type", "inputs", "runafter", "description"):
            job.not_carried.append(f"{where}: {key}")
    inputs = action.get("inputs")
    if not isinstance(inputs, dict):
        raise SourceError(f"{where}: no 'inputs'")
    resolved = {k: _resolve(v, values, job, f"{where}: inputs.{k}") for k, v in inputs.items()}
    uri = resolved.get("uri")
    if not isinstance(uri, str) or _expression(uri):
        raise SourceError(f"{where}: inputs.uri is not a plain URL (an expression, or missing)")
    if isinstance(resolved.get("queries"), dict) and resolved["queries"]:
        uri += ("&" if "?" in uri else "?") + urlencode(resolved["queries"])
    request: dict[str, Any] = {"uri": uri, "method": str(resolved.get("method", "GET")).upper()}
    request.update(_payload(resolved.get("headers"), resolved.get("body")))
    raw_auth = inputs.get("authentication")
    auth = _authentication(resolved.get("authentication"), raw_auth, job, where, part)
    if auth is not None:
        request["authentication"] = auth
    for key in inputs:
        if key not in CARRIED_INPUTS:
            job.not_carried.append(f"{where}: inputs.{key}")
    out: dict[str, Any] = {"type": "Https" if uri.lower().startswith("https:") else "Http"}
    out["request"] = request
    retry = _retry(resolved.get("retryPolicy"), job, where)
    if retry is not None:
        out["retryPolicy"] = retry
    return out


def _payload(headers: Any, body: Any) -> dict[str, Any]:
    """`headers` and `body` as a request carries them: text (JSON for an object or array,
    with its content type unless one is given)."""
    out: dict[str, Any] = {}
    if isinstance(headers, dict) and headers:
        out["headers"] = {k: v if isinstance(v, str) else json.dumps(v) for k, v in headers.items()}
    if body is None:
        return out
    out["body"] = body if isinstance(body, str) else json.dumps(body)
    typed = any(k.lower() == "content-type" for k in out.get("headers", {}))
    if not isinstance(body, str) and not typed:
        out["headers"] = {**out.get("headers", {}), "Content-Type": "application/json"}
    return out


def _authentication(
    auth: Any, raw: Any, job: WorkflowJob, where: str, part: str
) -> dict[str, Any] | None:
    if not isinstance(auth, dict):
        return None
    kind = str(auth.get("type", "")).lower()
    if kind not in AUTHENTICATIONS:
        job.not_carried.append(f"{where}: inputs.authentication ({auth.get('type')})")
        return None
    name, plain, secrets = AUTHENTICATIONS[kind]
    out: dict[str, Any] = {"type": name}
    for key in plain:
        if auth.get(key) is not None:
            out[key] = auth[key]
    raw = raw if isinstance(raw, dict) else {}
    for key in secrets:
        value = auth.get(key)
        if isinstance(value, str) and value and not _expression(value):
            out[key] = value
        elif isinstance(raw.get(key), str):
            match = WHOLE_PARAMETER.match(raw[key])
            parameter = match.group(1) if match else str(raw[key])
            job.unseen[f"properties.action.{part}request.authentication.{key}"] = parameter
    return out


def _retry(policy: Any, job: WorkflowJob, where: str) -> dict[str, Any] | None:
    if not isinstance(policy, dict):
        return None
    kind = str(policy.get("type", "")).lower()
    if kind == "none":
        return {"retryType": "None"}
    if kind in ("fixed", "exponential"):
        out = {"retryType": kind.capitalize(), "retryCount": policy.get("count")}
        out["retryInterval"] = policy.get("interval") or policy.get("minimumInterval")
        if kind == "exponential" and policy.get("maximumInterval"):
            out["maxRetryInterval"] = policy["maximumInterval"]
        return {k: v for k, v in out.items() if v is not None}
    job.not_carried.append(f"{where}: inputs.retryPolicy ({policy.get('type')})")
    return None


def _resolve(value: Any, values: dict[str, tuple[Any, bool]], job: WorkflowJob, where: str) -> Any:
    """`value` with its parameter references replaced where they have a value; any other
    expression is listed (sent as written)."""
    if isinstance(value, dict):
        return {k: _resolve(v, values, job, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, values, job, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value
    whole = WHOLE_PARAMETER.match(value)
    if whole:
        found = values.get(whole.group(1).lower())
        return value if found is None or found[0] is None else found[0]

    def inner(match: re.Match[str]) -> str:
        found = values.get(match.group(1).lower())
        if found is None or found[0] is None:
            return match.group(0)
        return found[0] if isinstance(found[0], str) else json.dumps(found[0])

    text = INNER_PARAMETER.sub(inner, value)
    if _expression(text) and not where.endswith(("password", "secret", "pfx")):
        job.not_carried.append(f"{where}: the expression {text[:80]!r} (sent as written)")
    return text


def _numbers(value: Any) -> Any:
    """Integers written as text (`"interval": "1"`, as templates often have them) as numbers,
    as Logic Apps reads them."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    return value


def _expression(value: Any) -> bool:
    """Whether a value is (or holds) a workflow expression: `@…` or `…@{…}…` (`@@` is a
    literal `@`)."""
    if not isinstance(value, str):
        return False
    return (value.startswith("@") and not value.startswith("@@")) or "@{" in value


def _type(item: Any) -> str:
    return str(item.get("type")) if isinstance(item, dict) else "?"
