"""A workflow an ARM template deploys, made ready for `reading`: what the template could not
evaluate, and its secure parameters that were given no value (`Unseen`).

- An error outside `properties.definition` (`deferred`) is reported only after the checks no
  value would change (the trigger, the first action).
- A secure template parameter without a value becomes a workflow parameter without one: a
  workflow parameter's value (`properties.parameters.NAME.value`) is emptied, and a secret of
  an action's `authentication` (password, secret, pfx) is read as `@parameters('TEMPLATE')`.
  Either way the job needs that secret, and `renamed` says which template parameter gives it.
  Anywhere else in the definition it is an error naming the parameter."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from horarium.importers.arm.expressions import Unseen
from horarium.importers.arm.mapping import leaves
from horarium.importers.documents import SourceError
from horarium.importers.logicapp.reading import WorkflowJob, check_shape, read_workflow

SECRETS = ("password", "secret", "pfx")


@dataclass(frozen=True)
class TemplateWorkflow:
    """A workflow's job; for a template's workflow, the template parameters that give the
    secrets the job lacks (empty for a workflow file)."""

    job: WorkflowJob
    renamed: dict[str, str] = field(default_factory=dict)  # workflow parameter → template's


def template_workflow(properties: Any, deferred: str | None) -> TemplateWorkflow:
    """The job of a workflow a template deploys, from its evaluated `properties`."""
    document = {"properties": copy.deepcopy(properties)}
    if deferred is not None:
        check_shape(document)
        raise SourceError(deferred)
    renamed = _without_unseen(document["properties"])
    return TemplateWorkflow(read_workflow(document, {}), renamed)


def _without_unseen(properties: Any) -> dict[str, str]:
    if not isinstance(properties, dict):
        return {}
    renamed: dict[str, str] = {}
    values = properties.get("parameters")
    for name, spec in (values if isinstance(values, dict) else {}).items():
        if isinstance(spec, dict) and isinstance(spec.get("value"), Unseen):
            renamed[name.lower()] = spec["value"].parameter
            spec["value"] = None
    for path, value in list(leaves(properties.get("definition"), ())):
        if not isinstance(value, Unseen):
            continue
        lower = [part.lower() for part in path]
        if len(lower) >= 2 and lower[-2] == "authentication" and lower[-1] in SECRETS:
            _put(properties["definition"], path, f"@parameters('{value.parameter}')")
            renamed[value.parameter.lower()] = value.parameter
        else:
            raise SourceError(
                f"definition.{'.'.join(path)} uses the secure parameter {value.parameter!r},"
                f" which has no value; give it with --set {value.parameter}=… (only a secret"
                " may be left out)"
            )
    return renamed


def _put(node: Any, path: tuple[str, ...], value: str) -> None:
    for part in path[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[path[-1]] = value
