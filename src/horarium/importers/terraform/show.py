"""The resources of `terraform show -json`: of a state (`values.root_module`) or of a plan
(`planned_values.root_module`: what the plan would leave, values known only after apply left
out), in the root module and its `child_modules`, managed resources only (a `data` source
creates nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from horarium.importers.documents import SourceError

COLLECTION_TYPE = "azurerm_scheduler_job_collection"
JOB_TYPE = "azurerm_scheduler_job"
TYPES = (COLLECTION_TYPE, JOB_TYPE)
MAX_MODULE_DEPTH = 32
MAX_RESOURCES = 800  # as for an ARM template


@dataclass(frozen=True)
class TfResource:
    """One Scheduler resource of the state or plan: its address (`module.x.azurerm_…["a"]`),
    type and attribute values; `unknown` holds the attributes a plan knows only after apply."""

    address: str
    type: str
    values: dict[str, Any]
    unknown: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Shown:
    kind: str  # "state" or "plan"
    resources: list[TfResource]


def scheduler_resources(document: dict[str, Any]) -> Shown:
    """The Scheduler resources of a `terraform show -json` document, in its order."""
    if isinstance(document.get("planned_values"), dict):
        kind, values = "plan", document["planned_values"]
    elif "values" in document or "format_version" in document:
        kind, values = "state", document.get("values") or {}
    else:
        raise SourceError(
            "not the output of `terraform show -json` (no 'values' or 'planned_values');"
            " a raw .tfstate file is not read: run `terraform show -json` on it"
        )
    if not isinstance(values, dict):
        raise SourceError(f"{kind}: 'values' is not an object")
    unknown = _unknown(document) if kind == "plan" else {}
    found = [
        TfResource(address, kind_of, attributes, unknown.get(address, frozenset()))
        for address, kind_of, attributes in _walk(values.get("root_module"), 0)
    ]
    if len(found) > MAX_RESOURCES:
        raise SourceError(f"{len(found)} Scheduler resources; at most {MAX_RESOURCES} per import")
    return Shown(kind, found)


def _walk(module: Any, depth: int) -> Iterator[tuple[str, str, dict[str, Any]]]:
    if module is None:
        return
    if not isinstance(module, dict):
        raise SourceError("a module of the state is not an object")
    if depth > MAX_MODULE_DEPTH:
        raise SourceError(f"modules nested more than {MAX_MODULE_DEPTH} deep")
    for resource in _list(module.get("resources"), "resources"):
        if not isinstance(resource, dict) or resource.get("type") not in TYPES:
            continue
        if resource.get("mode", "managed") != "managed":
            continue
        address = str(resource.get("address") or f"{resource['type']}.{resource.get('name')}")
        values = resource.get("values")
        if not isinstance(values, dict):
            raise SourceError(f"{address}: its 'values' are not an object")
        yield address, resource["type"], values
    for child in _list(module.get("child_modules"), "child_modules"):
        yield from _walk(child, depth + 1)


def _list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SourceError(f"a module's {name!r} is not a list")
    return value


def _unknown(document: dict[str, Any]) -> dict[str, frozenset[str]]:
    """Per address, the top-level attributes the plan knows only after apply."""
    out: dict[str, frozenset[str]] = {}
    for change in _list(document.get("resource_changes"), "resource_changes"):
        if not isinstance(change, dict) or change.get("type") not in TYPES:
            continue
        after = (change.get("change") or {}).get("after_unknown")
        if isinstance(after, dict):
            out[str(change.get("address"))] = frozenset(k for k, v in after.items() if _any(v))
    return out


def _any(marks: Any) -> bool:
    """Whether `after_unknown`'s marks (true, or objects and lists of them) hold a true."""
    if isinstance(marks, dict):
        return any(_any(v) for v in marks.values())
    if isinstance(marks, list):
        return any(_any(v) for v in marks)
    return marks is True
