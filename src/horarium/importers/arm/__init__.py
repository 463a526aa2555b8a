"""ARM templates with Azure Scheduler resources, read into the PUT bodies of Horarium's API.

    plan = read_arm(template_path, parameters_path, {"name": "value"}, scope, now)
    for item in plan.items: ...   # `Planned`: resource, body, unseen secrets; dependsOn order

`expressions` evaluates the template language, `template` finds and expands the Scheduler
resources, `mapping` turns each into a body for its apiVersion. Every problem is a
`TemplateError` of one line, raised before anything is sent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from horarium.importers.arm.expressions import Scope
from horarium.importers.arm.mapping import API_VERSIONS, Planned, planned
from horarium.importers.arm.template import (
    TemplateError,
    given_values,
    read_json,
    read_template,
    read_workflows,
)


@dataclass(frozen=True)
class ArmPlan:
    items: list[Planned]
    used_utc_now: bool  # a parameter default called utcNow(): a rerun evaluates it again


def read_arm(
    template: Path,
    parameters: Path | None,
    sets: Mapping[str, str],
    scope: Scope,
    now: datetime,
) -> ArmPlan:
    """The Scheduler resources of `template` with `parameters` (a parameters file) and `sets`
    (`--set` values), as PUT bodies in dependsOn order; a `TemplateError` names the file."""
    document = read_json(template, "template")
    values = read_json(parameters, "parameters file") if parameters is not None else None
    try:
        found = read_template(document, given_values(values, sets), scope, now)
        items = [planned(resource) for resource in found.resources]
    except TemplateError as e:
        raise TemplateError(f"{template}: {e}") from None
    except RecursionError:  # values nested deeper than Python's stack, in a valid JSON file
        raise TemplateError(f"{template}: values nested too deeply") from None
    return ArmPlan(items, found.used_utc_now)


def arm_workflows(
    document: dict[str, Any], sets: Mapping[str, str], scope: Scope, now: datetime
) -> list[tuple[str, Any, str | None]]:
    """The Logic Apps workflows a template deploys (name, evaluated properties, the error of a
    property other than the definition), `sets` being its parameters' values."""
    try:
        return read_workflows(document, given_values(None, sets), scope, now)
    except RecursionError:
        raise TemplateError("values nested too deeply") from None


__all__ = [
    "API_VERSIONS",
    "ArmPlan",
    "Planned",
    "Scope",
    "TemplateError",
    "arm_workflows",
    "read_arm",
]
