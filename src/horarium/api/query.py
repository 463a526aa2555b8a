"""List queries: `$filter`, `$top`/`$skip` paging and the `nextLink` of the next page."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlencode

from fastapi import Request

from horarium.model import enums
from horarium.model.errors import BadRequest

DEFAULT_PAGE = 1000  # without $top: every job of a collection (at most 1,000) on one page


def parse_filter(value: str | None, field: str, allowed: tuple[str, ...]) -> str | None:
    """`state eq Enabled` / `status eq 'Failed'` (any casing, quoted or not) -> the value."""
    if value is None or not value.strip():
        return None
    text = unquote(value) if "%" in value else value
    m = re.fullmatch(rf"\s*{field}\s+eq\s+(['\"]?)([A-Za-z]+)\1\s*", text, re.IGNORECASE)
    if not m:
        raise BadRequest(
            f'$filter: {value!r} is not supported; use "{field} eq <value>"'
            f" with one of {', '.join(allowed)}",
            code="InvalidFilter",
        )
    return enums.parse(m.group(2), allowed, f"$filter ({field})")


def next_link(
    request: Request, *, top: int | None, skip: int, shown: int, more: bool
) -> str | None:
    """The URL of the following page, keeping api-version, $top, $filter and $expand; None at
    the end.
    It starts with `--public-url` when that is set (`app.state.public_url`), else with the
    request's own URL, whose Host the Host check has let through."""
    if not more:
        return None
    params: list[tuple[str, str]] = [
        ("api-version", request.query_params.get("api-version", "2016-03-01"))
    ]
    if top is not None:
        params.append(("$top", str(top)))
    params.append(("$skip", str(skip + shown)))
    for kept in ("$filter", "$expand"):
        value = request.query_params.get(kept)
        if value:
            params.append((kept, value))
    query = urlencode(params, safe="$'")
    public_url: str | None = getattr(request.app.state, "public_url", None)
    if public_url is None:
        return str(request.url.replace(query=query))
    return f"{public_url.rstrip('/')}{request.url.path}?{query}"
