"""A template's Scheduler resources as the PUT bodies of Horarium's API (2016-03-01), for each
apiVersion Azure Scheduler had: 2014-08-01-preview, 2016-01-01 and 2016-03-01.

The three describe the same resources; what differs is kept here:

| template | sent |
|---|---|
| `sku.name` `Premium` (2014-08-01-preview, 2016-01-01) | `P10Premium` |
| integers written as text (`"maxJobCount": "10"`), which the service read as numbers | numbers |
| `location`, `tags`, `properties` of a collection | the same |
| `properties` of a job (`startTime`, `action`, `recurrence`, `state`) | the same |
| anything else on a resource (`dependsOn`, `copy`, `comments`, a job's `location`) | nothing |

A secret whose secure parameter has no value (`Unseen`) is left out where the API leaves it
out (passwords, the OAuth secret, the pfx, SAS tokens and keys) or sent as `***` where it masks
it (a credential header): the job then needs it before it can be created. Anywhere else an
unseen value is an error naming the parameter."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from horarium.importers.arm.expressions import Unseen
from horarium.importers.arm.template import SchedulerResource, TemplateError
from horarium.model.secrets import MASK, is_credential_name

API_VERSIONS = ("2014-08-01-preview", "2016-01-01", "2016-03-01")
PREMIUM_RENAMED = ("2014-08-01-preview", "2016-01-01")  # their `Premium` is `P10Premium`
LEFT_OUT = {
    ("authentication", "password"),
    ("authentication", "secret"),
    ("authentication", "pfx"),
    ("authentication", "saskey"),
    ("queuemessage", "sastoken"),
}
# Integer fields the service read from text as well (Newtonsoft), by lower-case path.
COLLECTION_INTEGERS = (
    ("properties", "quota", "maxjobcount"),
    ("properties", "quota", "maxjoboccurrence"),
    ("properties", "quota", "maxrecurrence", "interval"),
)
JOB_INTEGERS = (
    ("properties", "recurrence", "interval"),
    ("properties", "recurrence", "count"),
    ("properties", "action", "retrypolicy", "retrycount"),
    ("properties", "action", "erroraction", "retrypolicy", "retrycount"),
)


@dataclass(frozen=True)
class Planned:
    """One resource to PUT: its body, and the secrets it cannot carry (path → parameter)."""

    resource: SchedulerResource
    body: dict[str, Any]
    unseen: dict[str, str] = field(default_factory=dict)


def planned(resource: SchedulerResource) -> Planned:
    """The PUT body of `resource`; a `TemplateError` for an apiVersion Scheduler never had, or
    an unseen value outside a secret field."""
    if resource.api_version not in API_VERSIONS:
        raise TemplateError(
            f"{resource.label}: apiVersion {resource.api_version!r} is not one of Azure"
            f" Scheduler's ({', '.join(API_VERSIONS)})"
        )
    if resource.kind == "collection":
        return Planned(resource, _collection(resource))
    body, unseen = _job(resource)
    return Planned(resource, body, unseen)


def _collection(resource: SchedulerResource) -> dict[str, Any]:
    body = {k: v for k, v in resource.body.items() if k in ("location", "tags", "properties")}
    for path, value in leaves(body, ()):
        if isinstance(value, Unseen):
            raise _unseen_error(resource, path, value)
    sku = _child(_child(body.get("properties"), "sku"), "name")
    if resource.api_version in PREMIUM_RENAMED and isinstance(sku, str):
        if sku.strip().lower() == "premium":
            _set(body, ("properties", "sku", "name"), "P10Premium")
    for path in COLLECTION_INTEGERS:
        _as_integer(body, path)
    return body


def _job(resource: SchedulerResource) -> tuple[dict[str, Any], dict[str, str]]:
    body: dict[str, Any] = {"properties": resource.body.get("properties")}
    unseen: dict[str, str] = {}
    for path, value in list(leaves(body, ())):
        if not isinstance(value, Unseen):
            continue
        shown = ".".join(path)
        lower = tuple(p.lower() for p in path)
        if lower[-2:] in LEFT_OUT:
            _remove(body, path)
        elif len(path) >= 2 and lower[-2] == "headers" and is_credential_name(path[-1]):
            _set(body, path, MASK)
        else:
            raise _unseen_error(resource, path, value)
        unseen[shown] = value.parameter
    for path in JOB_INTEGERS:
        _as_integer(body, path)
    return body, unseen


def _unseen_error(resource: SchedulerResource, path: tuple[str, ...], value: Unseen) -> Exception:
    name = value.parameter
    return TemplateError(
        f"{resource.label}: {'.'.join(path)} uses the secure parameter {name!r}, which has no"
        f" value; give it with --set {name}=… or --parameters (only a secret may be left out)"
    )


def leaves(node: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every value that is not an object or array in `node`, with its path (indexes as text)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, (*path, str(i)))
    else:
        yield path, node


def _child(node: Any, name: str) -> Any:
    if isinstance(node, dict):
        return next((v for k, v in node.items() if k.lower() == name.lower()), None)
    return None


def _holder(body: dict[str, Any], path: tuple[str, ...]) -> tuple[Any, str | None]:
    """The object holding the last key of `path` (matched in any case), and that key."""
    node: Any = body
    for part in path[:-1]:
        node = _child(node, part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None, None
    key = next((k for k in node if k.lower() == path[-1].lower()), None)
    return node, key


def _set(body: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node, key = _holder(body, path)
    if node is not None:
        node[key if key is not None else path[-1]] = value


def _remove(body: dict[str, Any], path: tuple[str, ...]) -> None:
    node, key = _holder(body, path)
    if node is not None and key is not None:
        del node[key]


def _as_integer(body: dict[str, Any], path: tuple[str, ...]) -> None:
    node, key = _holder(body, path)
    if node is None or key is None:
        return
    value = node[key]
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        node[key] = int(value)
