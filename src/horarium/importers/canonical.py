"""A collection or job document as the API would answer it once PUT, computed with the
service's own model code (`horarium.model`): the spelling a template may use (`"http"`,
`"standard"`, `"PT1M"`, `"Frequency"`, `"westus"`) becomes the API's, so that comparing with
what the API answers tells a real change from a different spelling. A secret the document
lacks (left out, or `***`) is as the API shows it: absent or masked."""

from __future__ import annotations

import copy
from typing import Any

from horarium.client.secret_fields import secret_fields
from horarium.model.actions import WireStyle
from horarium.model.collection import parse_collection, render_collection, shaped
from horarium.model.errors import ApiError
from horarium.model.job import JobStatus, parse_job, properties_of, render_job
from horarium.model.names import CollectionName

PLACEHOLDER = "left-out-secret"  # stands in for a secret the document lacks; never sent
_NO_STATUS = JobStatus(0, 0, 0, None, None)
SERVICE_SET = ("id", "type", "name")  # what the API sets, not the request (and a job's status)


def collection_as_answered(body: dict[str, Any]) -> dict[str, Any] | None:
    """The collection's document as the API would answer it; None when the API would refuse
    it (its answer then says why)."""
    try:
        wanted = parse_collection(shaped(copy.deepcopy(body)))
    except ApiError:
        return None
    rendered = render_collection(
        CollectionName("s", "g", "c"),
        location=wanted.location,
        sku=wanted.sku,
        state=wanted.state,
        document=wanted.document,
    )
    return {k: v for k, v in rendered.items() if k not in SERVICE_SET}


def job_as_answered(body: dict[str, Any]) -> dict[str, Any] | None:
    """The job's document (without status) as the API would answer it; None when the API
    would refuse it."""
    try:
        wanted = parse_job(properties_of(_with_placeholders(body)))
    except ApiError:
        return None
    rendered = render_job(
        arm_id="",
        collection="c",
        name="j",
        definition=wanted.definition,
        state=wanted.state or "Enabled",
        status=_NO_STATUS,
        style=WireStyle(),
    )
    properties = {k: v for k, v in rendered["properties"].items() if k != "status"}
    return {"properties": properties}


def _with_placeholders(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of the job with each left-out secret filled in, so that it parses (the API
    leaves those fields out of its answer anyway)."""
    out = copy.deepcopy(body)
    for secret in secret_fields(out):
        *holder_path, name = secret.path.split(".")
        holder = _find(out, holder_path)
        if isinstance(holder, dict) and not any(k.lower() == name.lower() for k in holder):
            holder[name] = PLACEHOLDER
    return out


def _find(node: Any, path: list[str]) -> Any:
    for part in path:
        if not isinstance(node, dict):
            return None
        node = next((v for k, v in node.items() if k.lower() == part.lower()), None)
    return node
