"""Serving the dashboard's and the API explorer's files: read from the package once, at start,
and answered without a token (they hold no data: every data call the page makes goes through
the API with the token the user signed in with), under a strict Content-Security-Policy."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.responses import RedirectResponse

HERE = Path(__file__).parent

# No inline script anywhere, nothing loaded from another origin, no framing; the dashboard's
# own code only builds the page through DOM calls (Trusted Types would refuse an HTML sink).
_COMMON = (
    "default-src 'none'; script-src 'self'; img-src 'self' data:; connect-src 'self';"
    " base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
UI_POLICY = _COMMON + "; style-src 'self'; require-trusted-types-for 'script'"
# Swagger UI sets style attributes in its markup.
DOCS_POLICY = _COMMON + "; style-src 'self' 'unsafe-inline'"

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


@dataclass(frozen=True)
class Asset:
    body: bytes
    media_type: str
    policy: str

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'


def _file(path: Path, policy: str) -> Asset:
    return Asset(path.read_bytes(), _TYPES[path.suffix], policy)


def assets() -> dict[str, Asset]:
    """URL path -> file: the dashboard under /ui/, the API explorer under /docs."""
    static = HERE / "static"
    found = {
        "/ui/" + p.relative_to(static).as_posix(): _file(p, UI_POLICY)
        for p in sorted(static.rglob("*"))
        if p.suffix in _TYPES
    }
    found["/ui/"] = found.pop("/ui/index.html")
    vendor = HERE / "vendor" / "swagger-ui"
    found["/docs"] = _file(HERE / "docs" / "index.html", DOCS_POLICY)
    found["/docs/init.js"] = _file(HERE / "docs" / "init.js", DOCS_POLICY)
    found["/docs/docs.css"] = _file(HERE / "docs" / "docs.css", DOCS_POLICY)
    for name in ("swagger-ui-bundle.js", "swagger-ui.css"):
        found[f"/docs/{name}"] = _file(vendor / name, DOCS_POLICY)
    return found


def _headers(asset: Asset) -> dict[str, str]:
    return {
        "Content-Security-Policy": asset.policy,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cache-Control": "no-cache",
        "ETag": asset.etag,
    }


def install(app: FastAPI) -> frozenset[str]:
    """Add the GET routes of /ui and /docs, and of / (a redirect to the dashboard), to `app`
    (not in the OpenAPI document); returns their paths, which need no token."""
    files = assets()

    async def serve(request: Request) -> Response:
        asset = files[request.url.path]
        headers = _headers(asset)
        if request.headers.get("if-none-match") == asset.etag:
            return Response(status_code=304, headers=headers)
        return Response(asset.body, media_type=asset.media_type, headers=headers)

    async def to_index(_request: Request) -> Response:
        return RedirectResponse("/ui/", status_code=308)

    async def to_dashboard(_request: Request) -> Response:
        return RedirectResponse("/ui/", status_code=307)  # the root may serve more one day

    for path in files:
        app.add_route(path, serve, methods=["GET"], include_in_schema=False)
    app.add_route("/ui", to_index, methods=["GET"], include_in_schema=False)
    app.add_route("/", to_dashboard, methods=["GET"], include_in_schema=False)
    return frozenset({*files, "/ui", "/"})
