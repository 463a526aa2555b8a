"""Every main page of the dashboard renders with a realistic set of jobs, and its screenshot is
taken (at 1440×900, the jobs page also at 390×844): into a temporary folder, or, with
HORARIUM_UI_SCREENSHOTS=<folder> (scripts/ui-screenshots: docs/ui), where docs/ui.md shows them.
On the same jobs: every page passes axe-core's WCAG 2.0/2.1 A and AA rules at both sizes, the
header's links are reachable at 390 px, and the jobs page of a 1,000-job collection is timed
(printed, not asserted: docs/ui.md records the figure)."""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.server_process import ServerProcess
from tests.ui.ui_support import (
    Api,
    SharedChromium,
    add_history,
    axe_violations,
    fill_sign_in,
    job_id,
    sign_in,
)

SHOTS = os.environ.get("HORARIUM_UI_SCREENSHOTS")
WIDE = {"width": 1440, "height": 900}
NARROW = {"width": 390, "height": 844}


def _history(now: datetime, minutes: int, failing_every: int) -> list[dict[str, Any]]:
    """One execution a minute over the last `minutes`, with a varying start lag and duration."""
    rng = random.Random(11)
    entries = []
    for i in range(minutes, 0, -1):
        expected = (now - timedelta(minutes=i)).replace(second=0, microsecond=0)
        start = expected + timedelta(
            milliseconds=rng.randint(15, 120) + (900 if i % 17 == 0 else 0)
        )
        end = start + timedelta(milliseconds=rng.randint(20, 260))
        failed = failing_every and i % failing_every == 0
        entries.append(
            {
                "action_name": "MainAction",
                "status": "Failed" if failed else "Completed",
                "retry_count": 0,
                "repeat_count": minutes - i + 1,
                "expected_execution_time": expected,
                "start_time": start,
                "end_time": end,
                "message": "Http Action - Response from host '127.0.0.1': 'InternalServerError'"
                if failed
                else "Http Action - Response from host '127.0.0.1': 'OK'",
            }
        )
    return entries


def _make_demo(server: ServerProcess, target: str) -> Api:
    """The subscription `contoso`: two collections, jobs in several states and zones, an hour
    of history, and three executions in flight."""
    api = Api(server, "contoso")
    api.new_collection("nightly", group="ops")
    api.new_collection("billing", sku="P20Premium", group="finance")
    api.new_collection("sandbox", sku="Free", group="dev")
    business = {"weekends": True, "holidays": {"country": "US", "subdivision": "NY"}}
    calendar = api.collection("billing", group="finance") + "/calendars/business"
    assert api.put(calendar, {"properties": business}).status_code == 201

    def job(collection: str, name: str, uri: str, group: str = "ops", **props: Any) -> None:
        action = {"type": "Http", "request": {"uri": uri, "method": "POST"}}
        body = {"properties": {"action": action, **props}}
        response = api.put(api.job(collection, name, group=group), body)
        assert response.status_code == 201, response.text

    every_minute = {"frequency": "Minute", "interval": 1}
    job("nightly", "heartbeat", f"{target}/ok", recurrence=every_minute)
    job("nightly", "sync-orders", f"{target}/fail", recurrence={"frequency": "Hour", "interval": 1})
    job(
        "nightly",
        "backup",
        f"{target}/ok",
        recurrence={
            "frequency": "Day",
            "schedule": {"hours": [2], "minutes": [30]},
            "timeZone": "Europe/Berlin",
        },
    )
    job(
        "nightly",
        "invoice-run",
        f"{target}/ok",
        recurrence={"frequency": "Week", "schedule": {"weekDays": ["Monday"], "hours": [6]},
                    "timeZone": "Pacific Standard Time"},
    )  # fmt: skip
    job("nightly", "cleanup", f"{target}/ok", recurrence={"frequency": "Day"}, state="Disabled")
    for i in range(3):
        job("nightly", f"export-{i + 1}", f"{target}/slow", recurrence={"frequency": "Hour"})
    for i in range(24):
        job(
            "billing",
            f"statement-{i:02d}",
            f"{target}/ok",
            group="finance",
            recurrence={
                "frequency": "Day",
                "schedule": {"hours": [i], "minutes": [5]},
                "timeZone": "America/New_York",
                **({"excludeCalendars": ["business"]} if i < 6 else {}),
                **({"onExcluded": "NextBusinessDay"} if i % 2 else {}),
            },
            state="Disabled" if i % 7 == 3 else "Enabled",
        )
    now = datetime.now(UTC)
    add_history(server, job_id(server, "nightly", "heartbeat"), _history(now, 60, 0))
    add_history(server, job_id(server, "nightly", "sync-orders"), _history(now, 45, 3))
    for i in range(3):
        assert api.post(api.job("nightly", f"export-{i + 1}", group="ops") + "/run").is_success
    return api


@pytest.fixture(scope="module")
def demo(server: ServerProcess, target: str) -> Api:
    """The module's jobs (`server`: its own, with only `contoso`; tests/ui/conftest.py)."""
    return _make_demo(server, target)


def _settled(page: Any) -> None:
    """Wait until nothing on the page says it is loading or redrawing."""
    page.wait_for_function(
        """() => !document.body.innerText.includes("Loading…")
                 && !document.querySelector(".busy")"""
    )


# Every page of the dashboard: name, route, what shows once it has rendered.
PAGES: list[tuple[str, str, str]] = [
    ("collections", "#/collections", "td .quota"),
    ("jobs", "#/jobs/ops/nightly", "#jobs-list tbody tr"),
    ("jobs-billing", "#/jobs/finance/billing", "#calendars tbody tr"),
    ("timeline", "#/timeline/ops/nightly", "#timeline .lane"),
    ("job", "#/job/ops/nightly/heartbeat", "#job-chart svg.chart"),
    ("job-failing", "#/job/ops/nightly/sync-orders", "#job-chart svg.chart"),
    ("new-job", "#/new/ops/nightly", "#job-form"),
    ("edit-job", "#/edit/ops/nightly/backup", "#preview-list"),
    ("calendar", "#/calendar/finance/billing/business", "#excluded-days tbody tr"),
    ("calendar-form", "#/calendar-edit/finance/billing/business", "#preview-days"),
    ("new-calendar", "#/calendar-new/finance/billing", "#calendar-form"),
    ("failures", "#/failures", "#failures tbody tr"),
    ("engine", "#/engine", "#engine"),
]


def _open(page: Any, server: ServerProcess, route: str, ready: str) -> None:
    from playwright.sync_api import expect

    page.goto(server.url(f"/ui/{route}"))
    expect(page.locator(ready).first).to_be_visible()
    _settled(page)


def test_every_main_page_renders_and_is_photographed(
    server: ServerProcess, demo: Api, chromium: SharedChromium, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    out = Path(SHOTS) if SHOTS else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []

    def shot(page: Any, name: str) -> None:
        _settled(page)
        page.screenshot(path=str(out / f"{name}.png"))

    with chromium.page(viewport=WIDE) as page:
        page.on("pageerror", lambda e: problems.append(str(e)))
        fill_sign_in(page, server, demo.subscription)
        shot(page, "signin")
        page.click("form.signin button[type=submit]")
        expect(page.locator("td .quota").first).to_contain_text("of")
        expect(page.locator(".quota")).not_to_contain_text(["…", "…", "…"])
        shot(page, "collections")

        _open(page, server, "#/jobs/ops/nightly", "#jobs-list tbody tr")
        expect(page.locator("#jobs-list tbody tr")).to_have_count(8)
        expect(page.locator("#jobs-list tbody")).not_to_contain_text("…")
        expect(page.locator("#calendars")).to_contain_text("No exclusion calendars")
        shot(page, "jobs")

        _open(page, server, "#/job/ops/nightly/heartbeat", "#job-chart svg.chart")
        expect(page.locator("#job-chart svg.chart")).to_have_count(2)
        expect(page.locator("#job-upcoming tbody tr")).to_have_count(20)
        shot(page, "job")

        _open(page, server, "#/timeline/ops/nightly", "#timeline .lane")
        shot(page, "timeline")

        _open(page, server, "#/new/ops/nightly", "#job-form")
        page.fill("#job-name", "nightly-report")
        page.fill("#uri", "https://reports.example.com/run")
        page.select_option("#method", "POST")
        page.fill("#startTime", "2027-03-26T00:00:00")
        page.select_option("#frequency", "Day")
        page.fill("#hours", "2")
        page.fill("#minutes", "30")
        page.fill("#timeZone", "Europe/Berlin")
        expect(page.locator("#preview-list .dst")).to_have_count(1)
        page.locator("#field-frequency").scroll_into_view_if_needed()
        page.evaluate("window.scrollTo(0, 260)")
        shot(page, "form")

        _open(page, server, "#/calendar/finance/billing/business", "#excluded-days tbody tr")
        expect(page.locator("#calendar-effects [data-job]").first).to_be_visible()
        shot(page, "calendar")

        _open(page, server, "#/calendar-edit/finance/billing/business", "#preview-days")
        page.fill("#calendar-dates", "\n".join(_weekdays_ahead(2)))
        expect(page.locator("#preview-effects .change-new").first).to_be_visible()
        shot(page, "calendar-form")

        _open(page, server, "#/failures", "#failures tbody tr")
        expect(page.locator("#failures tbody tr").first).to_contain_text("sync-orders")
        shot(page, "failures")

        _open(page, server, "#/engine", "#engine")
        expect(page.locator("#engine code").first).to_be_visible()  # a process holds work
        shot(page, "engine")

    with chromium.page(viewport=NARROW) as page:
        page.on("pageerror", lambda e: problems.append(str(e)))
        sign_in(page, server, demo.subscription)
        expect(page.locator("td .quota").first).to_contain_text("of")
        _open(page, server, "#/jobs/ops/nightly", "#jobs-list tbody tr")
        expect(page.locator("#jobs-list tbody tr")).to_have_count(8)
        shot(page, "jobs-narrow")

    assert not problems, problems
    names = ("signin", "collections", "jobs", "job", "timeline", "form", "calendar")
    for name in (*names, "calendar-form", "failures", "engine", "jobs-narrow"):
        assert (out / f"{name}.png").stat().st_size > 10_000, name


def _weekdays_ahead(count: int) -> list[str]:
    """The next `count` weekdays after a week from now (dates a calendar could add)."""
    day = datetime.now(UTC).date() + timedelta(days=7)
    found: list[str] = []
    while len(found) < count:
        day += timedelta(days=1)
        if day.weekday() < 5:
            found.append(day.isoformat())
    return found


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["1440", "390"])
def test_every_page_passes_axe_wcag_a_and_aa(
    server: ServerProcess, demo: Api, chromium: SharedChromium, viewport: dict[str, int]
) -> None:
    from playwright.sync_api import expect

    found: dict[str, list[str]] = {}
    with chromium.page(viewport=viewport, bypass_csp=True) as page:
        fill_sign_in(page, server, demo.subscription)
        found["signin"] = axe_violations(page)
        page.click("form.signin button[type=submit]")
        expect(page.locator("td .quota").first).to_contain_text("of")
        for name, route, ready in PAGES:
            _open(page, server, route, ready)
            found[name] = axe_violations(page)
        _open(page, server, "#/jobs/ops/nightly", "#jobs-list tbody tr")
        page.locator("#jobs-list tbody input[type=checkbox]").first.check()
        page.get_by_role("button", name="Disable").click()
        expect(page.locator("#confirm")).to_be_visible()
        found["confirmation"] = axe_violations(page)
        page.keyboard.press("Escape")
    report = [f"{name}: {line}" for name, lines in found.items() for line in lines]
    assert not report, "\n".join(report)


# What sticks out past the screen's right edge: the innermost such elements, by tag and class.
_OVERFLOWING = """() => [...document.querySelectorAll("body *")]
    .filter((el) => el.getBoundingClientRect().right > innerWidth + 1
        && ![...el.children].some((c) => c.getBoundingClientRect().right > innerWidth + 1))
    .slice(0, 5).map((el) => `${el.tagName.toLowerCase()}.${el.className}#${el.id}`
        + ` right=${Math.round(el.getBoundingClientRect().right)}`).join(", ")
    + ` (scrollWidth ${document.documentElement.scrollWidth})`"""


def test_at_390_px_the_header_links_are_reachable_and_no_page_scrolls_sideways(
    server: ServerProcess, demo: Api, chromium: SharedChromium
) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    with chromium.page(viewport=NARROW) as page:
        sign_in(page, server, demo.subscription)
        expect(page.locator("td .quota").first).to_contain_text("of")
        for link in page.locator("header.top a, header.top button").all():
            expect(link).to_be_visible()
            box = link.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
        page.locator("#nav a", has_text="Failures").click()
        expect(page.locator("h1")).to_contain_text("Failures")
        wide: dict[str, str] = {}
        for name, route, ready in PAGES:
            _open(page, server, route, ready)
            try:  # a page may be wider for a moment while it draws; not once it has settled
                page.wait_for_function(
                    "(w) => document.documentElement.scrollWidth <= w", arg=390, timeout=5_000
                )
            except PlaywrightTimeout:
                wide[name] = str(page.evaluate(_OVERFLOWING))
        assert wide == {}


def _tab_to(page: Any, selector: str, limit: int = 120) -> None:
    """Press Tab until the element `selector` has focus (fails after `limit` presses)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def _focus_ring(page: Any) -> str:
    """The outline of the focused element: a visible ring, not `none`."""
    return str(
        page.evaluate(
            """() => { const s = getComputedStyle(document.activeElement);
                       return `${s.outlineStyle} ${s.outlineWidth}`; }"""
        )
    )


def test_the_keyboard_signs_in_selects_confirms_and_fills_a_calendar(
    server: ServerProcess, demo: Api, page: Any
) -> None:
    from playwright.sync_api import expect

    page.goto(server.url("/ui/"))
    page.focus("#signin-subscription")
    page.keyboard.type(demo.subscription)
    page.keyboard.press("Tab")
    expect(page.locator("#signin-token")).to_be_focused()
    page.keyboard.type(str(server.token))
    page.keyboard.press("Enter")
    expect(page.locator("td .quota").first).to_contain_text("of")

    page.goto(server.url("/ui/#/jobs/ops/nightly"))
    expect(page.locator("#jobs-list tbody tr")).to_have_count(8)
    _tab_to(page, "#jobs-list tbody input[type=checkbox]")
    assert _focus_ring(page) != "none 0px", _focus_ring(page)
    page.keyboard.press("Space")
    expect(page.locator("#jobs-list tbody input[type=checkbox]").first).to_be_checked()
    _tab_to(page, "#bulk-disable")
    assert _focus_ring(page).startswith("solid"), _focus_ring(page)
    page.keyboard.press("Enter")
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    for _ in range(4):  # the page behind is inert: Tab stays in the dialog
        page.keyboard.press("Tab")
        inside = page.evaluate(
            "() => document.getElementById('confirm').contains(document.activeElement)"
        )
        assert inside
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator("#bulk-disable")).to_be_focused()
    backup = demo.get(demo.job("nightly", "backup", group="ops")).json()
    assert backup["properties"]["state"].lower() == "enabled"  # cancelled: nothing sent

    page.goto(server.url("/ui/#/calendar-new/dev/sandbox"))
    expect(page.locator("h1")).to_have_text("New calendar")
    _tab_to(page, "#calendar-name")
    page.keyboard.type("keyboard")
    _tab_to(page, "#calendar-weekends")
    page.keyboard.press("Space")
    expect(page.locator("#preview-days")).to_contain_text("weekend")
    _tab_to(page, "#calendar-save")
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_have_text("keyboard")
    stored = demo.get(demo.collection("sandbox", group="dev") + "/calendars/keyboard")
    assert stored.json()["properties"] == {"weekends": True}


def test_the_jobs_page_of_a_thousand_job_collection_is_timed(
    server: ServerProcess, demo: Api, target: str, page: Any
) -> None:
    """Not asserted on a timer: the figures are printed (`-s`) for docs/ui.md."""
    import concurrent.futures

    from playwright.sync_api import expect

    demo.new_collection("thousand", sku="P20Premium", group="perf")

    def put(i: int) -> None:
        body = {
            "properties": {
                "state": "Disabled" if i % 10 == 9 else "Enabled",
                "startTime": "2090-01-01T00:00:00Z",  # none runs during the test
                "action": {"type": "Http", "request": {"uri": f"{target}/ok", "method": "GET"}},
                "recurrence": {"frequency": "Day", "schedule": {"hours": [i % 24], "minutes": [5]}},
            }
        }
        response = demo.put(demo.job("thousand", f"job-{i:04d}", group="perf"), body)
        assert response.status_code == 201, response.text

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(put, range(1000)))

    sign_in(page, server, demo.subscription)
    expect(page.locator("td .quota").first).to_contain_text("of")
    figures: list[tuple[float, float]] = []
    for _ in range(3):
        page.goto("about:blank")
        page.goto(server.url("/ui/#/jobs/perf/thousand"))  # a new document: timed from its start
        first = page.wait_for_function(
            """() => document.querySelectorAll("#jobs-list tbody tr").length === 50
                     && performance.now()"""
        ).json_value()
        done = page.wait_for_function(
            """() => document.getElementById("jobs-count")?.textContent === "1000 of 1000 jobs"
                     && document.querySelectorAll("#jobs-list tbody tr").length === 50
                     && performance.now()"""
        ).json_value()
        figures.append((float(first), float(done)))
    expect(page.locator("#jobs-list tbody tr")).to_have_count(50)
    shown = ", ".join(f"{a:.0f} ms / {b:.0f} ms" for a, b in figures)
    print(f"\njobs page of 1,000 jobs (first 50 rows / all 1,000 listed), 3 loads: {shown}")
