"""An ARM template read far enough to import its Scheduler resources: its parameters (from
`--set`, a parameters file, then their defaults), its variables, and every
`Microsoft.Scheduler/jobCollections` and `…/jobs` resource, top level or nested in a parent's
`resources`, expanded over `copy` loops, with `condition` honoured, in `dependsOn` order; for
`import --from logicapp`, the `Microsoft.Logic/workflows` resources (`read_workflows`).

Parameters and variables are evaluated on first use, so a parameter only a skipped resource
uses needs no value; every value given is still checked against its parameter's type.

Only the Scheduler resources are evaluated; the others (a web app, a storage account) are
skipped whole, so their `reference()` or `listKeys()` calls do not matter. Every error is a
`TemplateError` of one line naming the resource and the expression, raised before anything is
sent."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from horarium.importers.arm.expressions import (
    Context,
    ExpressionError,
    Scope,
    Unseen,
    evaluate_text,
)
from horarium.importers.documents import SourceError, read_json_object

COLLECTION_TYPE = "microsoft.scheduler/jobcollections"
JOB_TYPE = "microsoft.scheduler/jobcollections/jobs"
WORKFLOW_TYPE = "microsoft.logic/workflows"  # read by `import --from logicapp`
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024  # ARM's own limit
MAX_COPY_COUNT = 800  # ARM's own limit on one copy loop
MAX_RESOURCES = 800  # ARM's own limit on a template's resources (after copy loops)
SECURE_TYPES = ("securestring", "secureobject")
TYPES = ("string", "int", "bool", "object", "array", *SECURE_TYPES)


class TemplateError(SourceError):
    """A template that cannot be imported; one line naming where."""


@dataclass(frozen=True)
class SchedulerResource:
    """One Scheduler resource with its values evaluated."""

    kind: str  # "collection" or "job"
    names: tuple[str, ...]  # (collection,) or (collection, job)
    api_version: str
    body: dict[str, Any]  # location, tags, properties, … (evaluated; may hold Unseen)
    depends_on: tuple[str, ...]
    label: str  # how messages name it

    @property
    def path(self) -> str:
        """`collection` or `collection/job`."""
        return "/".join(self.names)


@dataclass(frozen=True)
class Template:
    resources: list[SchedulerResource]
    used_utc_now: bool  # a parameter default called utcNow()


def read_json(path: Path, what: str) -> dict[str, Any]:
    """The template or parameters file at `path`, within ARM's size limit."""
    try:
        return read_json_object(path, what, MAX_TEMPLATE_BYTES)
    except SourceError as e:
        raise TemplateError(str(e)) from None


def given_values(parameters_file: dict[str, Any] | None, sets: Mapping[str, str]) -> dict[str, Any]:
    """Parameter values from a parameters file (`{"parameters": {name: {"value": …}}}`, or
    the inner object alone) and `--set name=value` (text, read per the parameter's type
    later). A Key Vault reference is a value that cannot be seen here (`Unseen`)."""
    given: dict[str, Any] = {}
    if parameters_file is not None:
        inner = parameters_file.get("parameters", parameters_file)
        if not isinstance(inner, dict):
            raise TemplateError("the parameters file's 'parameters' is not an object")
        for name, entry in inner.items():
            if name.startswith("$") or name == "contentVersion":
                continue
            if isinstance(entry, dict) and "value" in entry:
                given[name] = entry["value"]
            elif isinstance(entry, dict) and "reference" in entry:
                given[name] = Unseen(name)
            else:
                raise TemplateError(f"parameters file: {name!r} has no 'value'")
    given.update({name: _SetText(value) for name, value in sets.items()})
    return given


class _SetText(str):
    """A `--set` value: text, converted to the parameter's type when read."""


def _typed(name: str, kind: str, value: Any) -> Any:
    """`value` checked against the parameter's type (`--set` text converted)."""
    if isinstance(value, Unseen):
        return value
    if isinstance(value, _SetText):
        text = str(value)
        try:
            if kind == "int":
                return int(text)
            if kind == "bool":
                if text.lower() not in ("true", "false"):
                    raise ValueError
                return text.lower() == "true"
            if kind in ("object", "array", "secureobject"):
                return json.loads(text)
        except ValueError:
            raise TemplateError(f"--set {name}: {text!r} is not a value of type {kind}") from None
        return text
    if kind not in TYPES:
        raise TemplateError(f"parameter {name!r}: type {kind!r} is unknown")
    checks = {
        "string": lambda v: isinstance(v, str),
        "securestring": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "secureobject": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    if not checks[kind](value):
        raise TemplateError(f"parameter {name!r}: {json.dumps(value)} is not of type {kind}")
    return value


@dataclass
class _Values:
    """Parameters and variables, each evaluated on first use (a cycle is an error)."""

    template: dict[str, Any]
    given: dict[str, Any]
    scope: Scope
    now: datetime
    done: dict[str, Any] = field(default_factory=dict)
    busy: set[str] = field(default_factory=set)
    used_utc_now: bool = False

    def context(self, *, in_default: bool = False) -> Context:
        return Context(
            self.scope, self.parameter, self.variable, self.now, in_parameter_default=in_default
        )

    def _declared(self, section: str, name: str) -> tuple[str, Any]:
        found = self.template.get(section) or {}
        for key, value in found.items():
            if key.lower() == name.lower():
                return key, value
        raise ExpressionError(f"the template has no {section[:-1]} {name!r}")

    def parameter(self, name: str) -> Any:
        key, declared = self._declared("parameters", name)
        return self._once(f"parameters.{key}", lambda: self._parameter(key, declared))

    def variable(self, name: str) -> Any:
        key, declared = self._declared("variables", name)
        return self._once(f"variables.{key}", lambda: evaluate_value(declared, self.context()))

    def _once(self, key: str, compute: Any) -> Any:
        if key in self.done:
            return self.done[key]
        if key in self.busy:
            raise ExpressionError(f"{key} refers to itself")
        self.busy.add(key)
        try:
            self.done[key] = compute()
        finally:
            self.busy.discard(key)
        return self.done[key]

    def _parameter(self, name: str, declared: Any) -> Any:
        if not isinstance(declared, dict):
            raise TemplateError(f"parameter {name!r} is not an object")
        kind = str(declared.get("type", "")).lower()
        if kind not in TYPES:
            raise TemplateError(f"parameter {name!r}: type {declared.get('type')!r} is unknown")
        given = next((v for k, v in self.given.items() if k.lower() == name.lower()), _NONE)
        if given is not _NONE:
            value = _typed(name, kind, given)
        elif "defaultValue" in declared:
            context = self.context(in_default=True)
            value = _typed(name, kind, evaluate_value(declared["defaultValue"], context))
            self.used_utc_now |= _calls_utc_now(declared["defaultValue"])
        elif kind in SECURE_TYPES:
            return Unseen(name)
        else:
            raise ExpressionError(
                f"parameter {name!r} has no value: give it with --set {name}=… or --parameters"
            )
        allowed = declared.get("allowedValues")
        if isinstance(allowed, list) and not isinstance(value, Unseen) and value not in allowed:
            raise ExpressionError(
                f"parameter {name!r}: {json.dumps(value)} is not one of its allowedValues"
            )
        return value


_NONE = object()


def _calls_utc_now(value: Any) -> bool:
    return isinstance(value, str) and "utcnow(" in value.replace(" ", "").lower()


def evaluate_value(value: Any, context: Context) -> Any:
    """A template value with every expression in it evaluated (objects and arrays walked)."""
    if isinstance(value, str):
        return evaluate_text(value, context)
    if isinstance(value, list):
        return [evaluate_value(item, context) for item in value]
    if isinstance(value, dict):
        if isinstance(value.get("copy"), list):
            raise ExpressionError("property copy loops ('copy' in properties) are not supported")
        return {key: evaluate_value(item, context) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class _Raw:
    """A resource declaration before evaluation, with where it sits."""

    declared: dict[str, Any]
    parent_type: str | None
    parent_names: tuple[str, ...]
    context: Context


def read_template(
    template: dict[str, Any],
    given: dict[str, Any],
    scope: Scope,
    now: datetime,
) -> Template:
    """Every Scheduler resource of `template`, evaluated, in dependsOn order."""
    values, resources = _opened(template, given, scope, now)
    found: list[SchedulerResource] = []
    for raw in _expanded(resources, None, (), values.context()):
        found.append(_evaluated(raw))
        if len(found) > MAX_RESOURCES:
            raise TemplateError(f"more than {MAX_RESOURCES} Scheduler resources (the limit)")
    return Template(_ordered(found), values.used_utc_now)


def read_workflows(
    template: dict[str, Any], given: dict[str, Any], scope: Scope, now: datetime
) -> list[tuple[str, Any, str | None]]:
    """The name and evaluated `properties` of each top-level `Microsoft.Logic/workflows`
    resource of `template` (copy loops and conditions honoured), in document order; the
    workflow language's own `@…` expressions are left as they are. The third item is the
    error of a property other than `definition` that does not evaluate (left out of the
    properties): the caller reports it only when the definition itself would import."""
    values, resources = _opened(template, given, scope, now)
    found: list[tuple[str, Any, str | None]] = []
    for item in resources:
        if not isinstance(item, dict):
            raise TemplateError("a resource is not a JSON object")
        label = f"resource {item.get('type')!r} {item.get('name')!r}"
        kind = _step(label, lambda item=item: evaluate_value(item.get("type"), values.context()))
        if not isinstance(kind, str) or kind.lower() != WORKFLOW_TYPE:
            continue
        for each in _copies(item, label, values.context()):
            if not _condition(item, label, each):
                continue
            declared_name, declared = item.get("name"), item.get("properties")
            name = _step(f"{label}: name", lambda c=each, v=declared_name: evaluate_value(v, c))
            properties, deferred = _workflow_properties(f"workflow {name!r}", declared, each)
            found.append((str(name), properties, deferred))
            if len(found) > MAX_RESOURCES:
                raise TemplateError(f"more than {MAX_RESOURCES} workflows (the limit)")
    return found


def _workflow_properties(label: str, declared: Any, context: Any) -> tuple[Any, str | None]:
    """`properties` evaluated, `definition` first; the first other property that fails is left
    out and its error returned."""
    if not isinstance(declared, dict):
        return _step(f"{label}: properties", lambda: evaluate_value(declared, context)), None
    ordered = sorted(declared.items(), key=lambda kv: kv[0] != "definition")
    out: dict[str, Any] = {}
    deferred: str | None = None
    for key, value in ordered:
        where = f"{label}: properties.{key}"
        try:
            out[key] = _step(where, lambda v=value: evaluate_value(v, context))
        except TemplateError as e:
            if key == "definition":
                raise
            deferred = deferred or str(e)
    return out, deferred


def _opened(
    template: dict[str, Any], given: dict[str, Any], scope: Scope, now: datetime
) -> tuple[_Values, list[Any]]:
    """The template's values (evaluated on first use) and its resources; every given value
    checked against its parameter."""
    values = _Values(template, given, scope, now)
    _check_sections(template)
    declared = {name.lower(): spec for name, spec in (template.get("parameters") or {}).items()}
    for name, value in given.items():  # a value for no parameter is a typo, not ignored
        spec = declared.get(name.lower())
        if spec is None:
            raise TemplateError(f"the template has no parameter {name!r} (given a value)")
        if isinstance(spec, dict):  # each given value is checked, used or not
            _typed(name, str(spec.get("type", "")).lower(), value)
    resources = template.get("resources") or []
    if not isinstance(resources, list):
        raise TemplateError("'resources' is not an array (symbolic names are not supported)")
    return values, resources


def _check_sections(template: dict[str, Any]) -> None:
    for section in ("parameters", "variables"):
        if not isinstance(template.get(section) or {}, dict):
            raise TemplateError(f"'{section}' is not an object")
    if "copy" in (template.get("variables") or {}):
        raise TemplateError("variable copy loops ('copy' in variables) are not supported")


def _step(where: str, work: Any) -> Any:
    try:
        return work()
    except ExpressionError as e:
        raise TemplateError(f"{where}: {e}") from None


def _full_type(declared_type: str, parent_type: str | None) -> str:
    if parent_type is None or "/" in declared_type:
        return declared_type
    return f"{parent_type}/{declared_type}"


def _expanded(
    declared: list[Any], parent_type: str | None, parent_names: tuple[str, ...], context: Context
) -> Iterator[_Raw]:
    """The Scheduler resource declarations under `declared`, each copy of a loop once, in
    document order; the conditions and copy counts evaluated on the way."""
    for item in declared:
        if not isinstance(item, dict):
            raise TemplateError("a resource is not a JSON object")
        raw_type = item.get("type")
        label = f"resource {raw_type!r} {item.get('name')!r}"
        kind = _step(label, lambda raw_type=raw_type: evaluate_value(raw_type, context))
        if not isinstance(kind, str):
            raise TemplateError(f"{label}: 'type' is not a string")
        full = _full_type(kind, parent_type)
        if full.lower() not in (COLLECTION_TYPE, JOB_TYPE):
            continue
        for each in _copies(item, label, context):
            if not _condition(item, label, each):
                continue
            raw = _Raw(item, parent_type, parent_names, each)
            yield raw
            children = item.get("resources") or []
            if children:
                names = _names(raw, full, label)
                yield from _expanded(children, full, names, each)


def _copies(item: dict[str, Any], label: str, context: Context) -> Iterator[Context]:
    copy = item.get("copy")
    if copy is None:
        yield context
        return
    if not isinstance(copy, dict):
        raise TemplateError(f"{label}: 'copy' is not an object")
    name = copy.get("name")
    count = _step(f"{label}: copy.count", lambda: evaluate_value(copy.get("count"), context))
    if not isinstance(name, str) or not isinstance(count, int) or isinstance(count, bool):
        raise TemplateError(f"{label}: copy needs a 'name' and an integer 'count'")
    if not 0 <= count <= MAX_COPY_COUNT:
        raise TemplateError(
            f"{label}: copy.count {count} is not in 0..{MAX_COPY_COUNT} (the limit)"
        )
    for index in range(count):
        yield context.inside(name, index)


def _condition(item: dict[str, Any], label: str, context: Context) -> bool:
    if "condition" not in item:
        return True
    value = _step(f"{label}: condition", lambda: evaluate_value(item["condition"], context))
    if not isinstance(value, bool):
        raise TemplateError(f"{label}: condition is not a bool")
    return value


def _names(raw: _Raw, full_type: str, label: str) -> tuple[str, ...]:
    """The resource's names: (collection,) or (collection, job)."""
    name = _step(f"{label}: name", lambda: evaluate_value(raw.declared.get("name"), raw.context))
    if isinstance(name, Unseen):
        raise TemplateError(f"{label}: its name uses the secure parameter {name.parameter!r}")
    if not isinstance(name, str) or not name:
        raise TemplateError(f"{label}: 'name' is not a string")
    parts = tuple(name.split("/"))
    declared_type = str(evaluate_value(raw.declared.get("type"), raw.context))
    if raw.parent_type is not None and "/" not in declared_type:
        parts = (*raw.parent_names, *parts)
    wanted = 1 if full_type.lower() == COLLECTION_TYPE else 2
    if len(parts) != wanted or any(not part for part in parts):
        raise TemplateError(
            f"{label}: the name {'/'.join(parts)!r} does not name a"
            f" {'collection' if wanted == 1 else 'collection/job'}"
        )
    return parts


def _evaluated(raw: _Raw) -> SchedulerResource:
    declared = raw.declared
    kind = str(evaluate_value(declared.get("type"), raw.context))
    full = _full_type(kind, raw.parent_type)
    is_job = full.lower() == JOB_TYPE
    label = f"resource {declared.get('type')!r} {declared.get('name')!r}"
    names = _names(raw, full, label)
    label = f"{'job' if is_job else 'collection'} {'/'.join(names)!r}"
    body = {
        key: _step(f"{label}: {key}", lambda value=value: evaluate_value(value, raw.context))
        for key, value in declared.items()
        if key in ("location", "tags", "properties", "sku")
    }
    version = _step(
        f"{label}: apiVersion", lambda: evaluate_value(declared.get("apiVersion"), raw.context)
    )
    depends = _step(
        f"{label}: dependsOn", lambda: evaluate_value(declared.get("dependsOn") or [], raw.context)
    )
    if not isinstance(depends, list) or not all(isinstance(d, str) for d in depends):
        raise TemplateError(f"{label}: dependsOn is not an array of strings")
    return SchedulerResource(
        kind="job" if is_job else "collection",
        names=names,
        api_version=str(version),
        body=body,
        depends_on=tuple(depends),
        label=label,
    )


def _matches(dependency: str, resource: SchedulerResource) -> bool:
    """Whether a dependsOn entry (a resource id, `type/name`, or a bare name) names it."""
    wanted = dependency.strip("/").lower()
    names = [n.lower() for n in resource.names]
    segments = ["jobcollections", names[0]] + (["jobs", names[1]] if len(names) == 2 else [])
    tail = "/".join(segments)
    if wanted == names[-1]:
        return True
    return wanted.endswith("microsoft.scheduler/" + tail) or wanted == tail


def _ordered(found: list[SchedulerResource]) -> list[SchedulerResource]:
    """Document order, each resource after what it depends on (and a job after its
    collection); a cycle is an error."""
    after: dict[int, set[int]] = {i: set() for i in range(len(found))}
    for i, resource in enumerate(found):
        for dependency in resource.depends_on:
            after[i] |= {
                j for j, other in enumerate(found) if j != i and _matches(dependency, other)
            }
        if resource.kind == "job":
            parent = resource.names[0].lower()
            after[i] |= {
                j
                for j, other in enumerate(found)
                if other.kind == "collection" and other.names[0].lower() == parent
            }
    ordered: list[int] = []
    placed: set[int] = set()
    visiting: set[int] = set()

    def place(i: int) -> None:
        if i in placed:
            return
        if i in visiting:
            raise TemplateError(f"{found[i].label}: dependsOn forms a cycle")
        visiting.add(i)
        for j in sorted(after[i]):
            place(j)
        visiting.discard(i)
        placed.add(i)
        ordered.append(i)

    for i in range(len(found)):
        place(i)
    return [found[i] for i in ordered]
