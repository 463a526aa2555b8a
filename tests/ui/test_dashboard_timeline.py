"""The collection timeline page in a real Chromium against a real `horarium serve` (scheduler
off: nothing here is due to run): the next 24 hours and 7 days of every job from one API call,
calendar-skipped, moved, jittered and paused runs marked by shape and words, in UTC or a chosen
zone; and the schedules the jobs list and a job page show are the API's `scheduleDescription`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.server_process import ServerProcess, running_server
from tests.ui.ui_support import Api, signed_in_at

# `target`, `page` and `api`: tests/ui/conftest.py.


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The module's `horarium serve`, without a scheduler (the timeline only reads)."""
    with running_server(tmp_path_factory.mktemp("timeline-ui")) as process:
        yield process


def _calls(page: Any, server: ServerProcess) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if r.url.startswith(server.base_url) else None)
    return seen


def test_the_timeline_marks_each_kind_of_run_in_the_chosen_zone(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    # The window starts at the page's minute: a job made in an hour's first minute runs first at
    # the next hour, so only 23 of its runs fall in the next 24 hours. Start past that minute.
    while datetime.now(UTC).minute == 0:
        time.sleep(1)
    now = datetime.now(UTC)
    today = now.date()
    hour = (now.hour + 6) % 24  # the daily jobs run hours away from now, never at its edge
    closed = [str(today + timedelta(days=d)) for d in (0, 1)]
    calendar = api.collection(collection) + "/calendars/closed"
    assert api.put(calendar, {"properties": {"dates": closed}}).status_code == 201
    uri = f"{target}/ok"
    api.new_job(collection, "hourly", uri, recurrence={"cron": "0 * * * *"})
    api.new_job(
        collection, "report", uri,
        recurrence={"cron": f"30 {hour} * * *", "excludeCalendars": ["closed"]},
    )  # fmt: skip
    api.new_job(
        collection, "moving", uri,
        recurrence={
            "cron": f"45 {hour} * * *",
            "excludeCalendars": ["closed"],
            "onExcluded": "NextBusinessDay",
        },
    )  # fmt: skip
    off = {"cron": f"15 {hour} * * *"}
    api.new_job(collection, "off", uri, state="Disabled", recurrence=off)
    spread = {"cron": f"0 {(hour + 1) % 24} * * *", "jitter": "PT50M"}
    api.new_job(collection, "spread", uri, recurrence=spread)
    api.new_job(collection, "minutely", uri, recurrence={"frequency": "Minute"})

    calls = _calls(page, server)
    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    rows = page.locator("#jobs-list tbody tr")
    expect(rows.filter(has_text="report")).to_contain_text(
        f"every day at {hour:02d}:30 UTC, except closed (2 dates)"
    )
    page.click("#timeline-link")
    expect(page.locator("h1")).to_have_text(f"Timeline of {collection}")
    lanes = page.locator("#timeline .lane[data-job]")
    expect(lanes).to_have_count(6)
    hourly = page.locator('[data-job="hourly"] .mark')
    expect(hourly).to_have_count(24)
    expect(page.locator('[data-job="hourly"] .schedule')).to_have_text("every hour at :00 UTC")
    skipped = page.locator('[data-job="report"] .mark[data-kind="skipped"]')
    expect(skipped).to_have_count(1)
    expect(skipped).to_have_text("✕")  # a shape, not colour alone
    expect(skipped).to_have_attribute("aria-label", _containing("skipped: calendar closed"))
    paused = page.locator('[data-job="off"] .mark')
    expect(paused).to_have_count(1)
    expect(paused).to_have_attribute("data-kind", "paused")
    expect(page.locator('[data-job="off"]')).to_contain_text("paused (job Disabled)")
    spread = page.locator('[data-job="spread"] .mark')
    expect(spread).to_have_count(1)
    expect(spread).to_have_attribute("aria-label", _containing("— 20"))
    # 1,440 runs are too many to tell apart: one band says how many.
    expect(page.locator('[data-job="minutely"] .band')).to_have_attribute("data-count", "1440")
    expect(page.locator('[data-job="minutely"] .mark')).to_have_count(0)
    # One call to the API's collection timeline, never one per job.
    assert sum("/upcoming" in url for url in calls) == 1, calls

    page.select_option("#timeline-span", "7d")
    # 168 hourly runs would overlap: one band says how many (marks stay for the other kinds).
    expect(page.locator('[data-job="hourly"] .band')).to_have_attribute("data-count", "168")
    expect(hourly).to_have_count(0)
    expect(page.locator('[data-job="report"] .mark')).to_have_count(7)
    moved = page.locator('[data-job="moving"] .mark[data-kind="moved"]')
    expect(moved).to_have_count(1)
    expect(moved).to_have_attribute("aria-label", _containing("moved by calendar closed"))
    expect(page.locator('[data-job="spread"] .mark[data-kind="jittered"]')).not_to_have_count(0)

    page.fill("#timeline-zone", "Asia/Kolkata")
    page.press("#timeline-zone", "Enter")
    expect(page.locator("#timeline-window")).to_contain_text("times in Asia/Kolkata")
    first = page.locator('[data-job="report"] .mark').first
    kolkata = f" {(hour + 6) % 24:02d}:00:00 (UTC+05:30)"  # hh:30 UTC
    expect(first).to_have_attribute("aria-label", _containing(kolkata))
    # Days start at midnight on the chosen clock.
    expect(page.locator(".lane.axis .tick").first).to_have_text(_containing("-"))
    page.fill("#timeline-zone", "Mars/Olympus")
    page.press("#timeline-zone", "Enter")
    expect(page.locator("#timeline-zone-error")).to_contain_text("Mars/Olympus")
    expect(page.locator("#timeline-window")).to_contain_text("times in Asia/Kolkata")

    page.goto(server.url(f"/ui/#/job/rg1/{collection}/moving"))
    told = (
        f"every day at {hour:02d}:45 UTC, except closed (2 dates); moved to the next business day"
    )
    expect(page.locator("dl.summary")).to_contain_text(told)
    # The edit form's live preview names it too, from the preview's own answer.
    page.click("#job-edit")
    expect(page.locator("#preview-schedule")).to_have_text(told)


def _containing(text: str) -> Any:
    import re

    return re.compile(re.escape(text))
