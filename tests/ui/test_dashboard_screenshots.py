"""Every main page of the dashboard renders with a realistic set of jobs, and its screenshot is
taken: into a temporary folder, or, with HORARIUM_UI_SCREENSHOTS=<folder> (scripts/
ui-screenshots: docs/ui), where docs/ui.md shows them."""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.server_process import ServerProcess
from tests.ui.ui_support import Api, add_history, fill_sign_in, job_id

SHOTS = os.environ.get("HORARIUM_UI_SCREENSHOTS")


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


def _demo(server: ServerProcess, target: str) -> Api:
    """The subscription `contoso`: two collections, jobs in several states and zones, an hour
    of history, and three executions in flight."""
    api = Api(server, "contoso")
    api.new_collection("nightly", group="ops")
    api.new_collection("billing", sku="P20Premium", group="finance")
    api.new_collection("sandbox", sku="Free", group="dev")

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
            recurrence={"frequency": "Day", "schedule": {"hours": [i], "minutes": [5]}},
            state="Disabled" if i % 7 == 3 else "Enabled",
        )
    now = datetime.now(UTC)
    add_history(server, job_id(server, "nightly", "heartbeat"), _history(now, 60, 0))
    add_history(server, job_id(server, "nightly", "sync-orders"), _history(now, 45, 3))
    for i in range(3):
        assert api.post(api.job("nightly", f"export-{i + 1}", group="ops") + "/run").is_success
    return api


# `server` (its own, with only `contoso`), `target` and `page`: tests/ui/conftest.py.


def test_every_main_page_renders_and_is_photographed(
    server: ServerProcess, target: str, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    out = Path(SHOTS) if SHOTS else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    api = _demo(server, target)
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))

    def shot(name: str) -> None:
        page.wait_for_timeout(300)  # let the last redraw land
        page.screenshot(path=str(out / f"{name}.png"))

    fill_sign_in(page, server, api.subscription)
    shot("signin")
    page.click("form.signin button[type=submit]")
    expect(page.locator("td .quota").first).to_contain_text("of")
    expect(page.locator(".quota")).not_to_contain_text(["…", "…", "…"])
    shot("collections")

    page.goto(server.url("/ui/#/jobs/ops/nightly"))
    expect(page.locator("#jobs-list tbody tr")).to_have_count(8)
    expect(page.locator("#jobs-list tbody")).not_to_contain_text("…")
    expect(page.locator("#calendars")).to_contain_text("No exclusion calendars")
    shot("jobs")

    page.goto(server.url("/ui/#/job/ops/nightly/heartbeat"))
    expect(page.locator("#job-chart svg.chart")).to_have_count(2)
    expect(page.locator("#job-upcoming tbody tr")).to_have_count(20)
    shot("job")

    page.goto(server.url("/ui/#/new/ops/nightly"))
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
    shot("form")

    page.goto(server.url("/ui/#/failures"))
    expect(page.locator("#failures tbody tr").first).to_contain_text("sync-orders")
    shot("failures")

    page.goto(server.url("/ui/#/engine"))
    expect(page.locator("#engine code").first).to_be_visible()  # a process holds work
    shot("engine")
    assert not problems, problems
    for name in ("signin", "collections", "jobs", "job", "form", "failures", "engine"):
        assert (out / f"{name}.png").stat().st_size > 10_000, name
