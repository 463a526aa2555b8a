"""PATCH semantics: a JSON merge patch (RFC 7386) over the stored resource, as the live service
deep-merged. One refinement: an object whose discriminator (`type`) changes is replaced, not
merged, so a Basic password never leaks into a ClientCertificate authentication."""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """`target` with `patch` applied; neither is modified. `null` removes a property."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict) or _type_changes(target, patch):
        target = {}
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _type_changes(target: dict[str, Any], patch: dict[str, Any]) -> bool:
    old, new = target.get("type"), patch.get("type")
    if not isinstance(old, str) or not isinstance(new, str):
        return False
    return old.strip().lower() != new.strip().lower()
