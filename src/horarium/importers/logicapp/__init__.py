"""Logic Apps workflows both ways: a workflow definition with a `Recurrence` trigger and an `Http`
first action read into one job (`reading`), and a job written as such a workflow (`writing`),
each with the list of what the other side cannot carry.

    jobs = read_logicapp(path, {"name": "value"}, ("rg", "collection", None), scope, now)
    workflow = workflow_of(job_as_the_api_answers_it)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from horarium.importers.arm import Scope, arm_workflows
from horarium.importers.documents import Document, SourceError, read_json_object
from horarium.importers.logicapp.reading import read_workflow
from horarium.importers.logicapp.templates import TemplateWorkflow, template_workflow
from horarium.importers.logicapp.writing import Workflow, windows_zone, workflow_of

MAX_FILE_BYTES = 4 * 1024 * 1024  # a workflow definition is at most 1 MB in Azure; room to spare


@dataclass(frozen=True)
class ImportedWorkflow:
    document: Document
    not_carried: list[str]


def read_logicapp(
    path: Path,
    sets: Mapping[str, str],
    where: tuple[str, str, str | None],
    scope: Scope,
    now: datetime,
) -> list[ImportedWorkflow]:
    """The jobs the workflows in `path` schedule, as documents for `where` (resource group,
    collection, job name or None: after the workflow). The file is a workflow (resource or
    definition; `sets` gives its parameters' values and the job is named after the file) or an
    ARM template deploying workflows (`sets` gives the template's parameters, `scope` and
    `now` what its scope functions and utcNow() answer; each job is named after its workflow).
    A `SourceError` names the file."""
    try:
        document = read_json_object(path, "workflow", MAX_FILE_BYTES)
        if isinstance(document.get("resources"), list):
            found = [
                (str(name), template_workflow(properties, deferred))
                for name, properties, deferred in arm_workflows(document, sets, scope, now)
            ]
            if not found:
                raise SourceError("the template deploys no Microsoft.Logic/workflows resource")
        else:
            found = [(_name_of(path), TemplateWorkflow(read_workflow(document, sets)))]
    except SourceError as e:
        message = str(e)
        raise SourceError(message if message.startswith(str(path)) else f"{path}: {e}") from None
    except RecursionError:
        raise SourceError(f"{path}: values nested too deeply") from None
    group, collection, job = where
    if job is not None and len(found) > 1:
        raise SourceError(f"{path}: --job names one job; the template deploys {len(found)}")
    several = len(found) > 1
    return [
        _imported(group, collection, job or name, workflow, name if several else "")
        for name, workflow in found
    ]


def _name_of(path: Path) -> str:
    """The file's name without `.workflow.json` (as export writes it) or `.json`."""
    for suffix in (".workflow.json", ".json"):
        if path.name.lower().endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def _imported(
    group: str, collection: str, name: str, workflow: TemplateWorkflow, prefix: str
) -> ImportedWorkflow:
    job, renamed = workflow.job, workflow.renamed
    parameters = sorted(set(job.unseen.values()))
    hints = [
        _lacking(kind, names)
        for kind, names in (
            ("workflow", [p for p in parameters if p.lower() not in renamed]),
            ("template", sorted({renamed[p.lower()] for p in parameters if p.lower() in renamed})),
        )
        if names
    ]
    hint = "; ".join(hints) or "the workflow does not give it"
    document = Document("job", group, (collection, name), job.body, hint)
    lines = [f"{prefix}: {line}" if prefix else line for line in job.not_carried]
    return ImportedWorkflow(document, lines)


def _lacking(kind: str, parameters: list[str]) -> str:
    names = ", ".join(map(repr, parameters))
    sets = " ".join(f"--set {p}=…" for p in parameters)
    return f"the {kind} parameter {names} has no value: {sets}"


__all__ = ["ImportedWorkflow", "Workflow", "read_logicapp", "windows_zone", "workflow_of"]
