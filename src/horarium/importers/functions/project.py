"""An Azure Functions project's timer triggers and a WebJob's schedule, found on disk.

- `FOLDER/NAME/function.json` (also the compiled `bin/…/NAME/function.json`): a binding of type
  `timerTrigger` gives `schedule` (NCRONTAB, six fields, or a TimeSpan such as `00:05:00`),
  `runOnStartup`; the file's `disabled`.
- `settings.job` (a WebJob's folder, e.g. `App_Data/jobs/triggered/NAME/settings.job`):
  `schedule` (NCRONTAB); the WebJob is named after its folder.
- `local.settings.json` at the top: `Values`, the app settings that `%NAME%` in a schedule
  names (`--set NAME=VALUE` wins), and `WEBSITE_TIME_ZONE` (the schedule's zone),
  `AzureWebJobs.NAME.Disabled`.

Bounded: folders at most 8 deep, at most 1000 timers, each file at most 1 MiB."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horarium.importers.documents import SourceError, read_json_object

MAX_DEPTH = 8
MAX_TIMERS = 1000
MAX_FILE_BYTES = 1024 * 1024
SKIPPED = {"node_modules", ".git", ".venv", "obj", ".vs", "__pycache__"}
SETTING = re.compile(r"%([^%]+)%")


@dataclass(frozen=True)
class Timer:
    """One timer: its name, the schedule with app settings resolved, where it was found."""

    kind: str  # "function" or "webjob"
    name: str
    schedule: str
    path: Path
    disabled: bool = False
    not_carried: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Project:
    timers: list[Timer]
    settings: dict[str, str]  # local.settings.json's Values, then --set


def read_project(folder: Path, sets: Mapping[str, str]) -> Project:
    """Every timer under `folder` (a Functions project, a WebJob, or a folder of them), sorted
    by name; a function found twice (source and build output) is read once, the first by path."""
    settings = _settings(folder)
    settings.update(sets)
    found: dict[str, Timer] = {}
    for path in sorted(_files(folder, 0), key=lambda p: (len(p.parts), str(p))):
        timer = _timer(path, settings)
        if timer is not None and timer.name.lower() not in found:
            found[timer.name.lower()] = timer
        if len(found) > MAX_TIMERS:
            raise SourceError(f"{folder}: more than {MAX_TIMERS} timers")
    if not found:
        raise SourceError(
            f"{folder}: no timer trigger (a function.json with a timerTrigger binding, or a"
            " WebJob's settings.job with a schedule)"
        )
    return Project(sorted(found.values(), key=lambda t: t.name.lower()), settings)


def _settings(folder: Path) -> dict[str, str]:
    path = folder / "local.settings.json"
    if not path.is_file():
        return {}
    values = read_json_object(path, "local.settings.json", MAX_FILE_BYTES).get("Values")
    if not isinstance(values, dict):
        return {}
    return {str(k): str(v) for k, v in values.items() if v is not None}


def _files(folder: Path, depth: int) -> Iterator[Path]:
    if depth > MAX_DEPTH:
        return
    try:
        entries = sorted(folder.iterdir())
    except OSError as e:
        raise SourceError(f"{folder}: cannot read the folder ({e.strerror})") from None
    for entry in entries:
        if entry.is_dir() and entry.name not in SKIPPED and not entry.is_symlink():
            yield from _files(entry, depth + 1)
        elif entry.name.lower() in ("function.json", "settings.job"):
            yield entry


def _timer(path: Path, settings: Mapping[str, str]) -> Timer | None:
    document = read_json_object(path, path.name, MAX_FILE_BYTES)
    name = path.parent.name
    if path.name.lower() == "settings.job":
        schedule = document.get("schedule")
        if not isinstance(schedule, str):
            return None  # a continuous or manually triggered WebJob
        notes = [f"{path}: {key}" for key in document if key != "schedule"]
        return Timer("webjob", name, _resolved(schedule, settings, path), path, False, notes)
    bindings = document.get("bindings")
    timers = [
        b
        for b in (bindings if isinstance(bindings, list) else [])
        if isinstance(b, dict) and str(b.get("type", "")).lower() == "timertrigger"
    ]
    if not timers:
        return None
    binding = timers[0]
    schedule = binding.get("schedule")
    if not isinstance(schedule, str) or not schedule.strip():
        raise SourceError(f"{path}: the timerTrigger binding has no schedule")
    notes = []
    if binding.get("runOnStartup"):
        notes.append(f"{path}: runOnStartup (the job runs on its schedule only)")
    disabled = _flag(document.get("disabled"), settings) or _flag(
        settings.get(f"AzureWebJobs.{name}.Disabled"), settings
    )
    return Timer("function", name, _resolved(schedule, settings, path), path, disabled, notes)


def _flag(value: Any, settings: Mapping[str, str]) -> bool:
    if isinstance(value, str):
        value = _resolved(value, settings, None) if "%" in value else value
        return value.strip().lower() in ("true", "1")
    return value is True


def _resolved(text: str, settings: Mapping[str, str], path: Path | None) -> str:
    """`%NAME%` replaced by the app setting's value."""

    def setting(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in settings:
            where = f"{path}: " if path else ""
            raise SourceError(
                f"{where}%{name}% has no value: --set {name}=… or local.settings.json's Values"
            )
        return settings[name]

    return SETTING.sub(setting, text).strip()
