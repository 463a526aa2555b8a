"""Logic Apps workflows both ways: a workflow definition with a `Recurrence` trigger and an `Http`
first action read into one job (`reading`), and a job written as such a workflow (`writing`),
each with the list of what the other side cannot carry.

    job = read_logicapp(path, {"name": "value"}, ("rg", "collection", "job"))
    workflow = workflow_of(job_as_the_api_answers_it)"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from horarium.importers.documents import Document, SourceError, read_json_object
from horarium.importers.logicapp.reading import read_workflow
from horarium.importers.logicapp.writing import Workflow, windows_zone, workflow_of

MAX_FILE_BYTES = 4 * 1024 * 1024  # a workflow definition is at most 1 MB in Azure; room to spare


@dataclass(frozen=True)
class ImportedWorkflow:
    document: Document
    not_carried: list[str]


def read_logicapp(
    path: Path, sets: Mapping[str, str], where: tuple[str, str, str]
) -> ImportedWorkflow:
    """The job the workflow in `path` schedules, as a document for `where` (resource group,
    collection, job); `sets` gives workflow parameters' values. A `SourceError` names the file."""
    try:
        job = read_workflow(read_json_object(path, "workflow", MAX_FILE_BYTES), sets)
    except SourceError as e:
        message = str(e)
        raise SourceError(message if message.startswith(str(path)) else f"{path}: {e}") from None
    except RecursionError:
        raise SourceError(f"{path}: values nested too deeply") from None
    group, collection, name = where
    parameters = sorted(set(job.unseen.values()))
    hint = "the workflow does not give it"
    if parameters:
        names = ", ".join(map(repr, parameters))
        hint = f"the workflow parameter {names} has no value: " + " ".join(
            f"--set {p}=…" for p in parameters
        )
    document = Document("job", group, (collection, name), job.body, hint)
    return ImportedWorkflow(document, job.not_carried)


__all__ = ["ImportedWorkflow", "Workflow", "read_logicapp", "windows_zone", "workflow_of"]
