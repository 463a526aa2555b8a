"""Terraform's `azurerm_scheduler_job_collection` and `azurerm_scheduler_job`, read from
`terraform show -json` (a state or a plan) into the documents `horarium import` PUTs.

    documents = read_terraform(path, {"ADDRESS.PATH": "value"}, group=None).documents

`show` finds the resources (root and child modules), `mapping` turns each into a body as the
azurerm provider 1.x built its request. Collections come first, then jobs, each in the file's
order. Every problem is a `SourceError` of one line naming the file and the address."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from horarium.importers.documents import Document, SourceError, read_json_object
from horarium.importers.terraform.mapping import document
from horarium.importers.terraform.show import COLLECTION_TYPE, TfResource, scheduler_resources

MAX_FILE_BYTES = 64 * 1024 * 1024  # a large state's JSON; bounded all the same
MAX_SET_DEPTH = 8  # `--set` paths: block, index, block, index, attribute…


@dataclass(frozen=True)
class TerraformPlan:
    kind: str  # "state" or "plan"
    documents: list[Document]


def read_terraform(path: Path, sets: Mapping[str, str], group: str | None) -> TerraformPlan:
    """The Scheduler resources of `path` as documents; `sets` gives values by
    `ADDRESS.ATTRIBUTE[.INDEX.ATTRIBUTE…]` (sensitive values the file lacks); `group` puts
    every resource in that resource group instead of its own."""
    shown_json = read_json_object(path, "terraform show -json output", MAX_FILE_BYTES)
    try:
        shown = scheduler_resources(shown_json)
        resources = [_with_sets(r, sets) for r in shown.resources]
        _all_used(sets, resources)
        ordered = sorted(resources, key=lambda r: r.type != COLLECTION_TYPE)
        documents = [document(r, group, shown.kind) for r in ordered]
    except SourceError as e:
        raise SourceError(f"{path}: {e}") from None
    except RecursionError:
        raise SourceError(f"{path}: values nested too deeply") from None
    return TerraformPlan(shown.kind, documents)


def _with_sets(resource: TfResource, sets: Mapping[str, str]) -> TfResource:
    given = {
        name[len(resource.address) + 1 :]: value
        for name, value in sets.items()
        if name.startswith(resource.address + ".")
    }
    if not given:
        return resource
    values: Any = _copy(resource.values)
    for attribute, value in given.items():
        _put(values, attribute.split("."), value, f"--set {resource.address}.{attribute}")
    return replace(resource, values=values)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _put(node: Any, parts: list[str], value: str, where: str) -> None:
    if len(parts) > MAX_SET_DEPTH:
        raise SourceError(f"{where}: a path of at most {MAX_SET_DEPTH} parts")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            if last:
                node[int(part)] = value
                return
            node = node[int(part)]
        elif isinstance(node, dict) and not part.isdigit():
            if last:
                node[part] = value
                return
            node = node.get(part)
        else:
            raise SourceError(f"{where}: {'.'.join(parts[: i + 1])} is not in the resource")


def _all_used(sets: Mapping[str, str], resources: list[TfResource]) -> None:
    for name in sets:
        if not any(name.startswith(r.address + ".") for r in resources):
            raise SourceError(f"--set {name}: no Scheduler resource has that address")


__all__ = ["Document", "SourceError", "TerraformPlan", "read_terraform"]
