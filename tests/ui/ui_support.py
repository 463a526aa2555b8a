"""Helpers of the dashboard tests: a local HTTP target for jobs, a small API client, history
and lease rows written the way the engine writes them, and the system's Chromium driven by
Playwright (never a browser Playwright downloads), shared by the tests of a session
(`SharedChromium`, tests/ui/conftest.py), with the dashboard's sign-in."""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.server
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server_process import ServerProcess, database_url
from tests.support import IN_CI, free_port

API_VERSION = {"api-version": "2016-03-01"}
VIEWPORT = {"width": 1280, "height": 800}
WAIT_MS = 60_000  # the longest a browser step may take (a run goes through the scheduler)

# Chromium talks to nothing but loopback: every other address goes to a dead proxy on
# 127.0.0.1:9 (loopback bypasses proxies), host names do not resolve, background services off.
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]


def unavailable(reason: str) -> None:
    """Skip (locally) or fail (CI=true) a test that cannot get its browser."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the browser tests must run)")
    pytest.skip(reason)


def chromium_args() -> list[str]:
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    return (["--no-sandbox"] if as_root else []) + CHROMIUM_ARGS


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """A headless Chromium (Debian's `chromium` on PATH) under Playwright's sync API."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install -e '.[test]')")
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        unavailable("Chromium is not installed (scripts/services.sh installs Debian's chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=chromium_args())
        try:
            yield browser
        finally:
            browser.close()


class SharedChromium:
    """One Chromium for a whole test session, lent to one test at a time (`page`)."""

    # Playwright's sync API marks its event loop as running on this thread between its calls,
    # which would stop every later asyncio test of the session (pytest-asyncio, asyncio.run):
    # the mark stands only while a test holds a page.

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.loop = asyncio.get_running_loop()  # Playwright's loop, marked by launched_chromium
        asyncio._set_running_loop(None)

    @contextmanager
    def page(
        self, viewport: dict[str, int] | None = None, bypass_csp: bool = False
    ) -> Iterator[Any]:
        """A page in a browser context of its own (no cookies or storage from other tests);
        `bypass_csp` lets a test inject a script (axe-core) that the dashboard's policy refuses."""
        from playwright.sync_api import expect

        asyncio._set_running_loop(self.loop)
        try:
            expect.set_options(timeout=WAIT_MS)
            context = self.browser.new_context(viewport=viewport or VIEWPORT, bypass_csp=bypass_csp)
            try:
                page = context.new_page()
                page.set_default_timeout(WAIT_MS)
                yield page
            finally:
                context.close()
        finally:
            asyncio._set_running_loop(None)

    def close(self) -> None:
        """Give Playwright its loop back, so that launched_chromium can close the browser."""
        asyncio._set_running_loop(self.loop)


AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"  # VENDORED.md beside it
AXE_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")


def axe_violations(page: Any, tags: tuple[str, ...] = AXE_TAGS) -> list[str]:
    """What axe-core (vendored) finds on the page as it is shown, against the WCAG 2.0 / 2.1 A and
    AA rules: one line per violation and element (empty when none). The page's context must
    bypass the CSP (`SharedChromium.page(bypass_csp=True)`): the script is injected inline."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    # The page as it is shown: after a rendered frame. What the page does as a frame renders
    # (its ResizeObserver makes a table that scrolls sideways focusable) is done by then; a
    # check for visibility lays the page out without rendering a frame.
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )
    found = page.evaluate(
        """(tags) => axe.run(document, {runOnly: {type: "tag", values: tags},
                                        resultTypes: ["violations"]})
            .then((r) => r.violations.flatMap((v) => v.nodes.map((n) =>
                `${v.id} (${v.impact}): ${n.target.join(" ")}: ${n.failureSummary}`)))""",
        list(tags),
    )
    return [str(line) for line in found]


def fill_sign_in(
    page: Any, server: ServerProcess, subscription: str, token: str | None = None
) -> None:
    """The dashboard's sign-in form on `server`, filled in (the admin's token by default)."""
    page.goto(server.url("/ui/"))
    page.fill("#signin-subscription", subscription)
    page.fill("#signin-token", token or str(server.token))


def sign_in(page: Any, server: ServerProcess, subscription: str, token: str | None = None) -> None:
    """Sign in to the dashboard of `server` (the admin's token by default)."""
    fill_sign_in(page, server, subscription, token)
    page.click("form.signin button[type=submit]")


def signed_in_at(page: Any, server: ServerProcess, subscription: str, route: str) -> None:
    """Sign in as the admin, wait for the collections page, then open `route` (`#/…`)."""
    from playwright.sync_api import expect

    sign_in(page, server, subscription)
    expect(page.locator("h1")).to_contain_text("Job collections")
    page.goto(server.url(f"/ui/{route}"))


class Target(http.server.BaseHTTPRequestHandler):
    """What jobs call: /ok answers 200, /fail 500, /slow 200 after `slow_seconds`."""

    slow_seconds = 30.0

    def _answer(self) -> None:
        if self.path.startswith("/slow"):
            time.sleep(self.slow_seconds)
        status = 500 if self.path.startswith("/fail") else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *_args: Any) -> None:
        pass


@contextmanager
def http_target() -> Iterator[str]:
    """A local HTTP server on 127.0.0.1; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Target)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Api:
    """Paths of one subscription on a running server, with a token (the admin's by default)."""

    def __init__(
        self, server: ServerProcess, subscription: str | None = None, token: str | None = None
    ) -> None:
        self.server = server
        self.subscription = subscription or f"sub-{uuid.uuid4().hex[:8]}"
        auth = {"Authorization": f"Bearer {token}"} if token else server.auth_headers()
        self.http = httpx.Client(base_url=server.base_url, headers=auth, timeout=30)

    def collection(self, name: str, group: str = "rg1") -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{group}"
            f"/providers/Microsoft.Scheduler/jobCollections/{name}"
        )

    def job(self, collection: str, name: str, group: str = "rg1") -> str:
        return f"{self.collection(collection, group)}/jobs/{name}"

    def failures(self) -> str:
        return f"/subscriptions/{self.subscription}/providers/Microsoft.Scheduler/failures"

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.http.get(path, params={**API_VERSION, **params})

    def put(self, path: str, body: Any) -> httpx.Response:
        return self.http.put(path, params=API_VERSION, json=body)

    def post(self, path: str) -> httpx.Response:
        return self.http.post(path, params=API_VERSION)

    def new_collection(
        self, name: str | None = None, sku: str = "Standard", group: str = "rg1"
    ) -> str:
        """Create a collection (a fresh name by default); returns its name."""
        name = name or f"jc{uuid.uuid4().hex[:6]}"
        body = {"location": "West US", "properties": {"sku": {"name": sku}}}
        response = self.put(self.collection(name, group), body)
        assert response.status_code in (200, 201), response.text
        return name

    def new_job(self, collection: str, name: str, uri: str, **properties: Any) -> None:
        body = {
            "properties": {
                "action": {
                    "type": "Http",
                    "request": {"uri": uri, "method": "GET"},
                    "retryPolicy": {"retryType": "None"},
                },
                **properties,
            }
        }
        response = self.put(self.job(collection, name), body)
        assert response.status_code in (200, 201), response.text


def in_database(server: ServerProcess, work: Callable[[Any], Any]) -> Any:
    """`await work(conn)` in a transaction on the server's database (on a thread of its own:
    Playwright's sync API keeps an event loop running on the test's thread)."""
    from horarium.store.core.db import create_engine

    async def run() -> Any:
        engine = create_engine(database_url(server))
        try:
            async with engine.begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run()).result()


def job_id(server: ServerProcess, collection: str, job: str) -> int:
    """The row id of a job (collection names are unique in the tests)."""
    from sqlalchemy import select

    from horarium.store.core.schema import job_collections, jobs

    async def read(conn: Any) -> int:
        query = (
            select(jobs.c.id)
            .join(job_collections, job_collections.c.id == jobs.c.collection_id)
            .where(job_collections.c.name == collection, jobs.c.key == job.lower())
        )
        return int((await conn.execute(query)).scalar_one())

    return int(in_database(server, read))


def add_history(server: ServerProcess, job: int, entries: list[dict[str, Any]]) -> None:
    """History rows of a job, as the engine writes them (the API only reads them)."""
    from sqlalchemy import insert

    from horarium.store.core.schema import job_history

    async def write(conn: Any) -> None:
        for entry in entries:
            await conn.execute(insert(job_history).values(job_id=job, **entry))

    in_database(server, write)


def update_job(server: ServerProcess, job: int, **values: Any) -> None:
    """Set scheduling columns of a job row (leases, next execution) as the engine would."""
    from sqlalchemy import update

    from horarium.store.core.schema import jobs

    async def write(conn: Any) -> None:
        await conn.execute(update(jobs).where(jobs.c.id == job).values(**values))

    in_database(server, write)


def add_execution(server: ServerProcess, job: int, **values: Any) -> None:
    """A job_executions row (a retry or run-now request), as the engine writes it."""
    from datetime import UTC, datetime

    from sqlalchemy import insert

    from horarium.store.core.schema import job_executions

    now = datetime.now(UTC)
    row = {
        "job_id": job,
        "execution_tag": uuid.uuid4().hex,
        "kind": "run_now",
        "repeat_count": 0,
        "expected_at": now,
        "job_version": 1,
        "phase": "main",
        "attempt": 0,
        "due_at": now,
        "lease_owner": None,
        "created_at": now,
        **values,
    }

    async def write(conn: Any) -> None:
        await conn.execute(insert(job_executions).values(**row))

    in_database(server, write)
