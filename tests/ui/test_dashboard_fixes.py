"""What the dashboard showed wrong or hard to read (issue 26, point 1), and what its jobs list
shows at a glance (point 2): each job's recent outcomes, failing and faulted jobs on top, bulk
actions with one confirmation and a result per job. A real Chromium against the module's real
`horarium serve` (tests/ui/conftest.py), each test on a subscription of its own."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.server_process import ServerProcess
from tests.ui.ui_support import (
    Api,
    add_execution,
    add_history,
    job_id,
    signed_in_at,
    update_job,
)

# `server`, `target`, `page` and `api`: tests/ui/conftest.py.


@pytest.fixture(autouse=True)
def no_page_errors(page: Any) -> Iterator[None]:
    """Every test's page ends without an uncaught script error."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield
    assert not errors, errors


WIDE = {"width": 1440, "height": 900}
NARROW = {"width": 390, "height": 844}


def _entry(status: str, expected: datetime, **values: Any) -> dict[str, Any]:
    """A history row as the engine writes it: a first attempt 50 ms late that took 1 s."""
    start = expected + timedelta(milliseconds=50)
    return {
        "action_name": "MainAction",
        "status": status,
        "retry_count": 0,
        "repeat_count": 1,
        "expected_execution_time": expected,
        "start_time": start,
        "end_time": start + timedelta(seconds=1),
        "message": f"{status} message",
        **values,
    }


# -- point 1: wrong on screen ----------------------------------------------------------------


def _null_texts(page: Any) -> list[str]:
    """The page's text nodes that read `null` (a null appended to an element)."""
    found: list[str] = page.evaluate(
        """() => {
            const main = document.querySelector('main');
            const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
            const found = [];
            while (walker.nextNode()) {
                const node = walker.currentNode;
                if (node.textContent.trim() === 'null') found.push(node.parentElement.tagName);
            }
            return found;
        }"""
    )
    return found


def test_no_literal_null_above_a_collections_jobs_nor_on_a_calendar_page(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    calendar = api.collection(collection) + "/calendars/closed"
    assert api.put(calendar, {"properties": {"dates": ["2091-01-01"]}}).status_code == 201
    api.new_job(collection, "ping", f"{target}/ok", startTime="2090-01-01T00:00:00Z")

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    expect(page.locator("#jobs-list tbody tr")).to_have_count(1)
    expect(page.locator("#calendars tbody tr")).to_have_count(1)
    assert _null_texts(page) == []
    page.goto(server.url(f"/ui/#/calendar/rg1/{collection}/closed"))
    expect(page.locator("#calendar-summary")).to_contain_text("2091-01-01")
    assert _null_texts(page) == []


def test_calendar_skipped_executions_are_marked_and_not_numbered_as_runs(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    calendar = api.collection(collection) + "/calendars/weekends"
    assert api.put(calendar, {"properties": {"weekends": True}}).status_code == 201
    recurrence = {"frequency": "Day", "excludeCalendars": ["weekends"], "onExcluded": "Skip"}
    # 2090-01-02 is a Monday: the first 20 listed days hold weekends.
    api.new_job(
        collection,
        "weekdays",
        f"{target}/ok",
        startTime="2090-01-02T08:00:00Z",
        recurrence=recurrence,
    )

    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/weekdays")
    runs = page.locator("#job-upcoming tbody tr:not(.calendar-skipped-row)")
    expect(runs).to_have_count(20)  # the 20 next runs, with the skipped ones among them
    skipped = page.locator("#job-upcoming tr.calendar-skipped-row")
    expect(skipped.first).to_contain_text("skipped: excluded by weekends")
    assert skipped.count() >= 4
    expect(skipped.first.locator("td").first).to_have_text("")  # not numbered: it does not run
    numbers = [int(n) for n in runs.locator("td:first-child").all_inner_texts()]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))

    page.click("#job-edit")
    expect(page.locator("#preview-list .utc")).to_have_count(10)  # ten runs
    rows = page.evaluate(
        """() => [...document.querySelectorAll('#preview-list li')].map((li) => ({
            skipped: li.classList.contains('calendar-skipped-row'),
            marker: getComputedStyle(li).listStyleType, value: li.value, text: li.textContent}))"""
    )
    numbered = [r for r in rows if r["marker"] != "none"]
    assert [r["value"] for r in numbered] == list(range(1, len(numbered) + 1))
    assert all(not r["skipped"] for r in numbered)
    skipped_rows = [r for r in rows if r["marker"] == "none"]
    assert skipped_rows and all("skipped: excluded by weekends" in r["text"] for r in skipped_rows)


def test_a_paused_job_shows_which_runs_do_not_happen_and_cannot_be_run_now(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    until = (datetime.now(UTC) + timedelta(hours=5, minutes=30)).replace(microsecond=0)
    pause = {"until": until.isoformat().replace("+00:00", "Z"), "reason": "supplier upgrade"}
    api.new_job(
        collection,
        "paused",
        f"{target}/ok",
        state="Disabled",
        pause=pause,
        recurrence={"frequency": "Hour"},
    )
    api.new_job(collection, "running", f"{target}/ok", recurrence={"frequency": "Hour"})

    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/paused")
    expect(page.locator("#job-upcoming tbody tr")).to_have_count(20)
    expect(page.locator("#upcoming-held")).to_contain_text("the job is paused")
    held = page.locator("#job-upcoming tr.held-row")
    expect(held.first).to_contain_text("does not run")
    times = page.evaluate(
        """() => [...document.querySelectorAll('#job-upcoming tbody tr')].map((tr) =>
            [tr.classList.contains('held-row'), tr.children[1].textContent])"""
    )
    for is_held, text in times:
        at = datetime.strptime(text, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        assert is_held == (at < until), (text, is_held)
    assert any(not is_held for is_held, _ in times)  # the runs after the pause do run
    expect(page.locator("#job-run")).to_be_disabled()
    expect(page.locator("#job-run")).to_have_attribute("title", re.compile("Disabled"))

    # A job of a paused collection: paused with it, until the collection's pause ends.
    page.goto(server.url(f"/ui/#/job/rg1/{collection}/running"))
    expect(page.locator("#job-run")).to_be_enabled()
    expect(page.locator("#upcoming-held")).to_have_count(0)
    body = {"properties": {"sku": {"name": "Standard"}, "state": "Disabled", "pause": pause}}
    assert api.put(api.collection(collection), {"location": "West US", **body}).is_success
    page.reload()
    expect(page.locator("#upcoming-held")).to_contain_text("Nothing runs before")
    expect(page.locator("#job-run")).to_be_disabled()


def test_the_engine_page_says_the_scheduler_is_alive_and_leaves_held_work_out_of_the_backlog(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    api.new_job(collection, "held", f"{target}/ok", recurrence={"frequency": "Hour"})
    assert api.post(api.collection(collection) + "/disable").status_code == 200
    due = datetime.now(UTC) - timedelta(minutes=3)
    add_execution(
        server, job_id(server, collection, "held"), kind="scheduled", attempt=1, due_at=due
    )

    signed_in_at(page, server, api.subscription, "#/engine")
    alive = page.locator("#scheduler-alive")
    expect(alive).to_contain_text("alive")
    expect(alive).to_contain_text(re.compile(r"latest heartbeat [\d.]+ (ms|s) ago"))
    backlog = page.locator("#due-backlog")
    expect(backlog).to_contain_text("held by disabled collections (not counted)")
    expect(backlog).not_to_contain_text("3 min ago")


def test_names_do_not_break_mid_word_and_history_messages_show_whole(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    api.new_job(
        collection,
        "zoned",
        f"{target}/ok",
        startTime="2090-01-01T00:00:00Z",
        recurrence={
            "frequency": "Day",
            "timeZone": "America/New_York",
            "schedule": {"hours": [7], "minutes": [0]},
        },
    )
    message = (
        "Http Action - Response from host '127.0.0.1': 'InternalServerError' Response Headers:"
        " Server: BaseHTTP/0.6 Python/3.12 Date: Fri, 27 Nov 2026 10:00:00 GMT the-end"
    )
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    add_history(
        server, job_id(server, collection, "zoned"), [_entry("Failed", hour, message=message)]
    )

    page.set_viewport_size(NARROW)
    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/zoned")
    expect(page.locator("dl.summary")).to_contain_text("America/New_York")
    broken = page.evaluate(
        """() => {
            const broken = [];
            const summary = document.querySelector('dl.summary');
            const walker = document.createTreeWalker(summary, NodeFilter.SHOW_TEXT);
            while (walker.nextNode()) {
                const node = walker.currentNode;
                for (const m of node.textContent.matchAll(/\\S+/g)) {
                    if (m[0].length > 24) continue;  // longer than a narrow line may break
                    const range = document.createRange();
                    range.setStart(node, m.index);
                    range.setEnd(node, m.index + m[0].length);
                    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                    if (tops.size > 1) broken.push(m[0]);
                }
            }
            return broken;
        }"""
    )
    assert broken == []

    page.set_viewport_size(WIDE)
    shown = page.locator("#job-history .message")
    expect(shown).to_have_text(message)
    expect(shown).to_be_visible()
    # The whole message lies inside the history card, nothing clipped or scrolled away.
    fits = page.evaluate(
        """() => {
            const m = document.querySelector('#job-history .message');
            const card = m.closest('.card').getBoundingClientRect();
            const box = m.getBoundingClientRect();
            return m.scrollWidth <= m.clientWidth + 1 && box.right <= card.right + 0.5
                && [...document.querySelectorAll('.table-wrap')].every(
                    (w) => w.scrollWidth <= w.clientWidth + 1);
        }"""
    )
    assert fits


def test_tables_fit_their_cards_at_1440_px(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    api.new_job(
        collection,
        "zoned",
        f"{target}/ok",
        startTime="2090-01-01T00:00:00Z",
        recurrence={
            "frequency": "Day",
            "timeZone": "Pacific Standard Time",
            "schedule": {"hours": [7], "minutes": [0]},
        },
    )
    api.new_job(
        collection, "stopped", f"{target}/ok", state="Disabled", recurrence={"frequency": "Day"}
    )
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    message = "Http Action - Response from host '127.0.0.1': 'OK' Response Headers: Server: x"
    add_history(
        server, job_id(server, collection, "zoned"), [_entry("Completed", hour, message=message)]
    )
    page.set_viewport_size(WIDE)
    overflowing = """() => [...document.querySelectorAll('.table-wrap')]
        .filter((w) => w.scrollWidth > w.clientWidth + 1)
        .map((w) => (w.closest('[id]') || {}).id)"""

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    expect(page.locator("#jobs-list tbody tr")).to_have_count(2)
    expect(page.locator("#jobs-list tbody")).to_contain_text("(UTC-08:00)")
    assert page.evaluate(overflowing) == []
    for job in ("zoned", "stopped"):
        page.goto(server.url(f"/ui/#/job/rg1/{collection}/{job}"))
        expect(page.locator("#job-upcoming tbody tr")).to_have_count(20)
        expect(page.locator("#job-history tbody tr")).not_to_have_count(0)
        assert page.evaluate(overflowing) == [], job


def test_the_empty_new_job_form_shows_no_error_before_anything_is_typed(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    signed_in_at(page, server, api.subscription, f"#/new/rg1/{collection}")
    # The first preview has been drawn (the page counts its drawings in data-version).
    expect(page.locator("#preview")).to_have_attribute("data-version", re.compile(r"^[1-9]\d*$"))
    expect(page.locator(".field-error:not(:empty)")).to_have_count(0)
    expect(page.locator("[aria-invalid=true]")).to_have_count(0)
    expect(page.locator("#form-error .error-box, #preview-error")).to_have_count(0)
    expect(page.locator("#preview-hint")).to_be_visible()
    # Once the user types, the API's messages show as before.
    page.fill("#uri", "not a uri")
    expect(page.locator("#field-uri .field-error")).to_contain_text("properties.action.request.uri")
    page.fill("#uri", f"{target}/ok")
    expect(page.locator("#preview-list .utc")).not_to_have_count(0)


# -- point 1: hard to read -------------------------------------------------------------------


def test_the_lag_chart_leaves_out_retry_waits_colours_bars_and_failures_say_if_final(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    retry = {"retryType": "Fixed", "retryInterval": "PT10M", "retryCount": 1}
    body = {
        "properties": {
            "startTime": "2090-01-01T00:00:00Z",
            "action": {
                "type": "Http",
                "request": {"uri": f"{target}/fail", "method": "GET"},
                "retryPolicy": retry,
            },
            "recurrence": {"frequency": "Hour"},
        }
    }
    assert api.put(api.job(collection, "flaky"), body).status_code == 201
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=2)
    later = hour + timedelta(hours=1)
    # Hour one: the first attempt fails; its retry, ten minutes later, fails too: final.
    # Hour two: completed.
    add_history(
        server,
        job_id(server, collection, "flaky"),
        [
            _entry("Failed", hour, message="first attempt"),
            _entry(
                "Failed",
                hour,
                retry_count=1,
                message="the retry",
                start_time=hour + timedelta(minutes=10),
                end_time=hour + timedelta(minutes=10, seconds=1),
            ),
            _entry("Completed", later),
        ],
    )

    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/flaky")
    expect(page.locator("#job-chart svg.chart")).to_have_count(2)
    charts = page.evaluate(
        """() => [...document.querySelectorAll('#job-chart figure')].map((f) => ({
            max: f.querySelector('text.tick').textContent,
            bars: [...f.querySelectorAll('g.bar rect:not(.hit)')].map(
                (r) => r.getAttribute('class')),
        }))"""
    )
    lag, took = charts
    assert lag["max"] == "50 ms"  # not the retry's ten-minute wait
    assert sorted(lag["bars"]) == ["outcome-completed", "outcome-failed"]
    assert sorted(took["bars"]) == ["outcome-completed", "outcome-failed", "outcome-failed"]
    colours = page.evaluate(
        """() => ['outcome-completed', 'outcome-failed'].map((c) =>
            getComputedStyle(document.querySelector('#job-chart rect.' + c)).fill)"""
    )
    assert colours[0] != colours[1]

    rows = page.locator("#job-history .history-row")
    expect(rows).to_have_count(3)
    expect(rows.filter(has_text="the retry")).to_contain_text("final: the execution faulted")
    expect(rows.filter(has_text="first attempt")).to_contain_text("retry 1 of 1 follows")
    expect(rows.filter(has_text="Completed message")).not_to_contain_text("final")

    # The failures page says the same, from the API's finalAttempt.
    page.click("#nav a[data-section=failures]")
    failures = page.locator("#failures tbody tr")
    expect(failures).to_have_count(2)
    expect(failures.filter(has_text="the retry")).to_contain_text("final: the execution faulted")
    expect(failures.filter(has_text="first attempt")).to_contain_text("a retry follows")


# -- point 2: the jobs list ------------------------------------------------------------------


def test_the_jobs_list_shows_recent_outcomes_and_failing_jobs_on_top_in_one_read(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    for job in ("steady", "flaky", "broken", "fresh"):
        api.new_job(
            collection,
            job,
            f"{target}/ok",
            startTime="2090-01-01T00:00:00Z",
            recurrence={"frequency": "Hour"},
        )
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=12)
    at = [start + timedelta(hours=i) for i in range(12)]
    add_history(server, job_id(server, collection, "steady"), [_entry("Completed", t) for t in at])
    add_history(
        server,
        job_id(server, collection, "flaky"),
        [
            _entry("Completed", at[0]),
            _entry("Postponed", at[1]),
            _entry("Failed", at[2], message="boom at two"),
        ],
    )
    broken = job_id(server, collection, "broken")
    add_history(server, broken, [_entry("Failed", at[0], message="gone for good")])
    update_job(server, broken, state="Faulted", next_execution_at=None)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    rows = page.locator("#jobs-list tbody tr")
    expect(rows).to_have_count(4)
    steady = rows.filter(has_text="steady").locator(".outcome")
    expect(steady).to_have_count(10)  # the newest ten of twelve
    flaky = rows.filter(has_text="flaky").locator(".outcome")
    expect(flaky).to_have_count(3)
    # Oldest to newest, each with its own colour and shape, and a tooltip: time and message.
    marks = flaky.evaluate_all(
        "(ms) => ms.map((m) => [m.className, m.textContent, getComputedStyle(m).backgroundColor,"
        " m.getAttribute('title')])"
    )
    assert [m[0].split()[1] for m in marks] == [
        "outcome-completed",
        "outcome-postponed",
        "outcome-failed",
    ]
    assert len({m[1] for m in marks}) == 3 and len({m[2] for m in marks}) == 3
    newest = marks[2][3]
    assert "boom at two" in newest and "failed" in newest
    when = datetime.strptime(newest[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert when == at[2] + timedelta(seconds=1)  # its end (to the second)
    expect(rows.filter(has_text="fresh")).to_contain_text("never ran")

    attention = page.locator("#attention tbody tr")
    expect(attention).to_have_count(2)
    expect(attention.nth(0)).to_contain_text("broken")
    expect(attention.nth(0)).to_contain_text("Faulted")
    expect(attention.nth(1)).to_contain_text("flaky")
    expect(attention.nth(1)).to_contain_text("boom at two")
    box = page.evaluate(
        "() => [document.getElementById('attention').getBoundingClientRect().top,"
        " document.getElementById('jobs-list').getBoundingClientRect().top]"
    )
    assert box[0] < box[1]  # on top of the list
    # One read for the whole collection, none per job.
    assert sum("/outcomes?" in u for u in asked) == 1
    assert not [u for u in asked if "/history" in u]


def test_bulk_actions_confirm_what_changes_and_report_each_job(
    page: Any, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    collection = api.new_collection()
    for job in ("alpha", "beta", "gamma"):
        api.new_job(
            collection,
            job,
            f"{target}/ok",
            startTime="2090-01-01T00:00:00Z",
            recurrence={"frequency": "Hour"},
        )
    api.new_job(
        collection, "asleep", f"{target}/ok", state="Disabled", recurrence={"frequency": "Hour"}
    )

    def state(job: str) -> str:
        return str(api.get(api.job(collection, job)).json()["properties"]["state"]).lower()

    def tick(*jobs: str) -> None:
        for job in jobs:
            page.get_by_label(f"Select {job}", exact=True).check()

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    expect(page.locator("#jobs-list tbody tr")).to_have_count(4)
    expect(page.locator("#bulk-disable")).to_be_disabled()
    tick("alpha", "asleep")
    expect(page.locator("#bulk-count")).to_have_text("2 selected")

    # Disable: one confirmation listing what changes and what does not; cancel changes nothing.
    page.click("#bulk-disable")
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm-text")).to_have_text("Disable 1 job?")
    expect(page.locator("#confirm-list li")).to_have_text(
        ["alpha: Enabled → Disabled", "asleep: already Disabled, unchanged"]
    )
    page.click("#confirm button[value=cancel]")
    assert state("alpha") == "enabled"
    page.click("#bulk-disable")
    page.click("#confirm-ok")
    expect(page.locator("#bulk-results .bulk-done")).to_have_text(["alpha: disabled"])
    assert state("alpha") == "disabled"

    # Run now on Enabled and Disabled jobs: the API refuses the Disabled ones, each on its line.
    tick("beta")
    page.click("#bulk-run")
    expect(page.locator("#confirm-list li")).to_have_count(3)
    page.click("#confirm-ok")
    results = page.locator("#bulk-results")
    expect(results).to_contain_text("1 done, 2 refused")
    expect(results.locator(".bulk-done")).to_have_text(["beta: run requested"])
    refused = results.locator(".bulk-refused")
    expect(refused).to_have_count(2)
    expect(refused.filter(has_text="alpha")).to_contain_text("JobStateConflict")
    expect(refused.filter(has_text="asleep")).to_contain_text("JobStateConflict")

    # Delete, after a confirmation that says it cannot be undone.
    page.click("#jobs-list tbody tr:has-text('beta') .select-job")  # untick beta
    page.click("#bulk-delete")
    expect(page.locator("#confirm-list li")).to_have_text(
        [re.compile(r"^alpha: deleted with its history"), re.compile(r"^asleep: deleted")]
    )
    page.click("#confirm-ok")
    expect(page.locator("#jobs-list tbody tr")).to_have_count(2)
    assert api.get(api.job(collection, "alpha")).status_code == 404
    assert api.get(api.job(collection, "asleep")).status_code == 404
    assert state("gamma") == "enabled"
