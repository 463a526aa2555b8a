"""The folder `horarium export` writes and `horarium import` reads:

    DIR/horarium-export.json                        {"format": 1, "subscription": "…"}
    DIR/<resource group>/<collection>/collection.json   the collection's PUT body
    DIR/<resource group>/<collection>/calendars/<calendar>.json   each exclusion calendar's
    DIR/<resource group>/<collection>/jobs/<job>.json   each job's PUT body
    DIR/<resource group>/<collection>/monitors/<monitor>.json   each check-in monitor's

Each document is what the API answers for the resource without what only the service sets
(`id`, `type`, `name`, a job's `status`, a monitor's status, check-in times and ping URL — a
monitor imported elsewhere gets a new ping token), as JSON with sorted keys and two-space
indents: one file per resource, stable from one export to the next, so that a diff shows what
changed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horarium.cli.options import OneLineError

MANIFEST = "horarium-export.json"
FORMAT = 1
COLLECTION_FILE = "collection.json"
JOBS_FOLDER = "jobs"
CALENDARS_FOLDER = "calendars"
MONITORS_FOLDER = "monitors"
READ_ONLY = ("id", "type", "name")
MONITOR_READ_ONLY = ("status", "lastCheckIn", "nextExpected", "pingUrl")


def dumps(document: dict[str, Any]) -> str:
    """A document as written: sorted keys, two-space indents, a final newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def collection_document(body: dict[str, Any]) -> dict[str, Any]:
    """A collection as the API answered it, without what only the service sets."""
    return {k: v for k, v in body.items() if k not in READ_ONLY}


def calendar_document(body: dict[str, Any]) -> dict[str, Any]:
    """A calendar as the API answered it, without what only the service sets."""
    return {k: v for k, v in body.items() if k not in READ_ONLY}


JOB_READ_ONLY = ("status", "scheduleDescription")  # a job's properties only the service sets


def job_document(body: dict[str, Any]) -> dict[str, Any]:
    """A job as the API answered it, without what only the service sets (its status and
    `scheduleDescription`)."""
    document = {k: v for k, v in body.items() if k not in READ_ONLY}
    properties = document.get("properties")
    if isinstance(properties, dict):
        document["properties"] = {k: v for k, v in properties.items() if k not in JOB_READ_ONLY}
    return document


def monitor_document(body: dict[str, Any]) -> dict[str, Any]:
    """A monitor as the API answered it, without what only the service sets (its status, its
    check-in times, and its ping URL: the token stays with the service it was made by)."""
    document = {k: v for k, v in body.items() if k not in READ_ONLY}
    properties = document.get("properties")
    if isinstance(properties, dict):
        document["properties"] = {k: v for k, v in properties.items() if k not in MONITOR_READ_ONLY}
    return document


def file_name(value: str, what: str) -> str:
    """`value` when it can be one file name (a name from the API; never a path)."""
    if value in ("", ".", "..") or "/" in value or "\\" in value or "\0" in value:
        raise ValueError(f"the API named a {what} {value!r}, which cannot be a file name")
    return value


@dataclass(frozen=True)
class JobFile:
    name: str
    path: Path
    document: dict[str, Any]


@dataclass(frozen=True)
class CalendarFile:
    """A member of a collection other than a job: an exclusion calendar, a monitor."""

    name: str
    path: Path
    document: dict[str, Any]


MonitorFile = CalendarFile


@dataclass(frozen=True)
class CollectionFile:
    resource_group: str
    name: str
    path: Path
    document: dict[str, Any]
    jobs: list[JobFile] = field(default_factory=list)
    calendars: list[CalendarFile] = field(default_factory=list)
    monitors: list[MonitorFile] = field(default_factory=list)


def collection_path(root: Path, resource_group: str, collection: str) -> Path:
    group = file_name(resource_group, "resource group")
    return root / group / file_name(collection, "collection") / COLLECTION_FILE


def job_path(root: Path, resource_group: str, collection: str, job: str) -> Path:
    folder = collection_path(root, resource_group, collection).parent / JOBS_FOLDER
    return folder / f"{file_name(job, 'job')}.json"


def calendar_path(root: Path, resource_group: str, collection: str, calendar: str) -> Path:
    folder = collection_path(root, resource_group, collection).parent / CALENDARS_FOLDER
    return folder / f"{file_name(calendar, 'calendar')}.json"


def monitor_path(root: Path, resource_group: str, collection: str, monitor: str) -> Path:
    folder = collection_path(root, resource_group, collection).parent / MONITORS_FOLDER
    return folder / f"{file_name(monitor, 'monitor')}.json"


def read_manifest(root: Path) -> dict[str, Any] | None:
    """The export's manifest; None when `root` holds none."""
    path = root / MANIFEST
    if not path.is_file():
        return None
    manifest = _read(path)
    if manifest.get("format") != FORMAT or not isinstance(manifest.get("subscription"), str):
        raise OneLineError(f"{path}: not a Horarium export manifest of format {FORMAT}")
    return manifest


def write_manifest(root: Path, subscription: str) -> None:
    (root / MANIFEST).write_text(dumps({"format": FORMAT, "subscription": subscription}))


def layout_files(folder: Path) -> list[Path]:
    """The files of the layout under `folder` (a root, resource group or collection folder)."""
    if not folder.is_dir():
        return []
    found = [
        *folder.rglob(COLLECTION_FILE),
        *folder.rglob(f"{JOBS_FOLDER}/*.json"),
        *folder.rglob(f"{CALENDARS_FOLDER}/*.json"),
        *folder.rglob(f"{MONITORS_FOLDER}/*.json"),
    ]
    return sorted(p for p in found if p.is_file())


def read_export(root: Path) -> list[CollectionFile]:
    """Every collection of an export with its calendars, jobs and monitors, sorted by resource
    group, collection and name; a one-line usage error naming the first file that is not a JSON
    object."""
    found = []
    for path in sorted(root.glob(f"*/*/{COLLECTION_FILE}")):
        folder = path.parent
        jobs = [
            JobFile(job.stem, job, _read(job))
            for job in sorted((folder / JOBS_FOLDER).glob("*.json"))
        ]
        calendars, monitors = (
            [CalendarFile(f.stem, f, _read(f)) for f in sorted((folder / kind).glob("*.json"))]
            for kind in (CALENDARS_FOLDER, MONITORS_FOLDER)
        )
        found.append(
            CollectionFile(
                folder.parent.name, folder.name, path, _read(path), jobs, calendars, monitors
            )
        )
    return found


def _read(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise OneLineError(f"{path}: cannot read it ({e.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise OneLineError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(value, dict):
        raise OneLineError(f"{path}: not a JSON object")
    return value


def remove_stale(scope: Path, written: set[Path]) -> list[Path]:
    """Remove the layout's files under `scope` that this export did not write (resources that
    no longer exist), and the folders they leave empty; returns the removed files."""
    stale = [p for p in layout_files(scope) if p not in written]
    for path in stale:
        path.unlink()
    for path in stale:
        for folder in (path.parent, path.parent.parent, path.parent.parent.parent):
            inside = folder != scope and folder.is_relative_to(scope)
            if inside and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    return stale
