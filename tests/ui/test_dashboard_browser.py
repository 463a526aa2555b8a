"""The dashboard in a real Chromium against a real `horarium serve` (scheduler on, jobs calling
a local HTTP target): sign in, create a collection and a job in the form with its live preview,
run it, watch its history, disable and enable it; the API's field errors; a wrong token; the
failures and engine pages. The browser reaches nothing but the server (checked per request)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from horarium.store.core.sealing import unseal_definition
from horarium.store.core.secret_keys import read_key_file
from tests import forkserver
from tests.server_process import ServerProcess
from tests.support import hour_with_room
from tests.ui.ui_support import Api, sign_in, signed_in_at

# `server`, `target`, `page` and `api`: tests/ui/conftest.py.


class Watched:
    """A page and what it did: requests it sent, console errors, policy violations."""

    def __init__(self, page: Any, server: ServerProcess) -> None:
        self.page = page
        self.requests: list[str] = []
        self.problems: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("console", self._console)
        self.origin = server.base_url

    def _console(self, message: Any) -> None:
        text = message.text
        # The API's refusals (the invalid field, the wrong token) are logged as failed loads.
        if message.type == "error" and "Failed to load resource" not in text:
            self.problems.append(text)

    def check(self) -> None:
        assert not self.problems, self.problems
        foreign = [u for u in self.requests if not u.startswith(self.origin + "/")]
        assert not foreign, f"the page reached beyond the server: {foreign}"


@pytest.fixture
def watched(page: Any, server: ServerProcess) -> Iterator[Watched]:
    """The test's page, watched; checked once its browser context is closed."""
    seen = Watched(page, server)
    yield seen
    page.context.close()
    seen.check()


def preview_times(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#preview-list .utc").all_inner_texts()]


def wait_for_preview_every(page: Any, minutes: int) -> None:
    """Until the preview lists executions `minutes` apart. It follows each change of the form, so
    it may show a form on the way first (Minute with the interval not yet changed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            """(minutes) => {
                const rows = [...document.querySelectorAll('#preview-list .utc')];
                const [a, b] = rows.slice(0, 2).map((r) =>
                    Date.parse(r.textContent.trim().replace(' UTC', 'Z').replace(' ', 'T')));
                return rows.length > 1 && b - a === minutes * 60000;
            }""",
            arg=minutes,
        )
    except PlaywrightTimeout:
        raise AssertionError(
            f"the preview never listed executions {minutes} min apart: {preview_times(page)[:3]}"
        ) from None


def test_a_user_creates_a_job_in_the_form_runs_it_and_disables_and_enables_it(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    subscription = api.subscription
    collection = f"jc{uuid.uuid4().hex[:6]}"
    sign_in(page, server, subscription)
    expect(page.locator("h1")).to_have_text(f"Job collections of {subscription}")

    page.click("summary:has-text('New job collection')")
    page.fill("#collection-name", collection)
    page.fill("#collection-group", "rg1")
    page.click("#collection-create")
    expect(page.locator("h1")).to_have_text(collection)

    page.click("#new-job")
    page.fill("#job-name", "ping")
    page.fill("#uri", f"{target}/ok")
    page.fill("#startTime", "2090-01-01T00:00:00Z")  # nothing runs but what we run
    page.select_option("#frequency", "Hour")
    wait_for_preview_every(page, 60)
    # A job without an executionPolicy: the preview shows no policy line (and no stray text).
    expect(page.locator("#preview #execution-policy")).to_have_count(0)
    expect(page.locator("#preview")).not_to_contain_text("null")
    page.fill("#interval", "3")
    wait_for_preview_every(page, 180)
    page.select_option("#frequency", "Minute")
    page.fill("#interval", "30")
    wait_for_preview_every(page, 30)
    page.click("#job-save")

    expect(page.locator("h1")).to_have_text("ping")
    expect(page.locator(".heading .badge")).to_have_text("Enabled")
    expect(page.locator("#job-upcoming tbody tr")).to_have_count(20)
    expect(page.locator("#job-upcoming #execution-policy")).to_have_count(0)
    expect(page.locator("#job-upcoming")).not_to_contain_text("null")
    expect(page.locator("#job-history")).to_contain_text("No history entries.")

    page.click("#job-run")
    expect(page.locator("#confirm")).to_be_visible()
    page.click("#confirm-ok")
    expect(page.locator("#job-history .history-row")).to_have_count(1)
    expect(page.locator("#job-history .history-row .badge")).to_have_text("Completed")
    expect(page.locator("#job-chart svg.chart")).to_have_count(2)

    page.click("#job-disable")
    page.click("#confirm-ok")
    expect(page.locator(".heading .badge")).to_have_text("Disabled")
    expect(page.locator("#job-enable")).to_be_enabled()
    expect(page.locator("#job-disable")).to_be_disabled()
    page.click("#job-enable")
    page.click("#confirm-ok")
    expect(page.locator(".heading .badge")).to_have_text("Enabled")

    state = api.get(api.job(collection, "ping"))
    assert state.json()["properties"]["state"].lower() == "enabled"
    assert state.json()["properties"]["recurrence"]["interval"] == 30


def test_an_invalid_field_shows_the_api_message_next_to_it(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    signed_in_at(page, server, api.subscription, f"#/new/rg1/{collection}")
    page.fill("#uri", f"{target}/ok")
    page.select_option("#frequency", "Hour")
    page.fill("#minutes", "0, 61")
    message = "properties.recurrence.schedule.minutes[1]: 61 is not in 0..59"
    expect(page.locator("#field-minutes .field-error")).to_have_text(message)
    expect(page.locator("#minutes")).to_have_attribute("aria-invalid", "true")
    page.fill("#minutes", "0, 30")
    expect(page.locator("#field-minutes .field-error")).to_have_text("")
    page.fill("#uri", "not a uri")
    expect(page.locator("#field-uri .field-error")).to_contain_text("properties.action.request.uri")
    # Saving shows the same message at the same place, and stores nothing.
    page.fill("#job-name", "broken")
    page.click("#job-save")
    expect(page.locator("#field-uri .field-error")).to_contain_text("properties.action.request.uri")
    assert api.get(api.job(collection, "broken")).status_code == 404


def test_the_collections_page_shows_their_notifications(
    watched: Watched, server: ServerProcess, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    notified = f"jc{uuid.uuid4().hex[:6]}"
    notification = {
        "events": ["JobFaulted", "JobRecovered"],
        "uri": "http://127.0.0.1:9/hook",
        "secret": "never-shown",
    }
    body = {"properties": {"sku": {"name": "Standard"}, "notifications": [notification]}}
    assert api.put(api.collection(notified), body).status_code == 201
    api.new_collection()
    sign_in(page, server, api.subscription)
    row = page.locator("tr", has=page.locator(f"a:text-is('{notified}')"))
    cell = row.locator(".notifications span")
    expect(cell).to_have_text("JobFaulted, JobRecovered")
    expect(cell).to_have_attribute("title", "http://127.0.0.1:9/hook")
    assert "never-shown" not in page.content()


def test_a_wrong_token_shows_the_sign_in_error(watched: Watched, server: ServerProcess) -> None:
    from playwright.sync_api import expect

    page = watched.page
    sign_in(page, server, "sub-wrong", token="hrm_not-a-real-key")
    expect(page.locator("#signin-error")).to_contain_text("Authentication failed")
    expect(page).to_have_url(re.compile(r"#/signin$"))
    assert page.evaluate("sessionStorage.getItem('horarium.token')") is None


def test_a_token_the_api_refuses_later_sends_the_user_back_to_sign_in(
    watched: Watched, server: ServerProcess
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    sign_in(page, server, f"sub-{uuid.uuid4().hex[:8]}")
    expect(page.locator("h1")).to_contain_text("Job collections")
    page.evaluate("sessionStorage.setItem('horarium.token', 'hrm_revoked')")
    page.click("#nav a[data-section=failures]")
    expect(page).to_have_url(re.compile(r"#/signin$"))
    expect(page.locator("#signin-error")).to_contain_text("Authentication failed")


def test_the_failures_and_engine_pages_show_a_failing_job(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    api.new_job(collection, "broken", f"{target}/fail", recurrence={"frequency": "Hour"})
    assert api.post(api.job(collection, "broken") + "/run").status_code == 200
    sign_in(page, server, api.subscription)
    expect(page.locator("h1")).to_contain_text("Job collections")

    page.click("#nav a[data-section=failures]")
    expect(page.locator("h1")).to_have_text("Failures")
    row = page.locator("#failures tbody tr").first
    for _ in range(30):  # the run goes through the scheduler: refresh until it is recorded
        if "Failed" in row.inner_text():
            break
        page.click("button:has-text('Refresh')")
        page.wait_for_timeout(1000)
    expect(row).to_contain_text(f"{collection} / broken")
    expect(row.locator(".badge").first).to_have_text("Failed")
    expect(row).to_contain_text("InternalServerError")

    page.click("#nav a[data-section=engine]")
    expect(page.locator("h1")).to_have_text("Engine")
    expect(page.locator("#engine .tile")).to_have_count(5)
    expect(page.locator("#engine svg.chart")).to_be_visible()
    expect(page.locator("#engine .tiles")).to_contain_text("executions in the last hour")
    lag = page.locator("#engine .tile", has_text="event loop lag")
    expect(lag).to_contain_text(re.compile(r"\d+ ms"))


def test_the_engine_page_explains_a_key_that_does_not_reach_every_subscription(
    watched: Watched, server: ServerProcess
) -> None:
    import sys

    from playwright.sync_api import expect

    subscription = f"sub-{uuid.uuid4().hex[:8]}"
    made = forkserver.run(
        [sys.executable, "-m", "horarium.cli", "keys", "create", "--subscription", subscription,
         "--role", "reader", "--data-dir", str(server.data_dir)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    page = watched.page
    sign_in(page, server, subscription, token=made.stdout.strip())
    expect(page.locator("h1")).to_contain_text("Job collections")
    page.click("#nav a[data-section=engine]")
    expect(page.locator("#engine .error-box")).to_contain_text("AuthorizationFailed")
    expect(page.locator("#engine")).to_contain_text("needs a key for all of them")


def test_the_header_switches_subscription_and_the_api_explorer_leads_back(
    watched: Watched, server: ServerProcess, api: Api
) -> None:
    import sys

    from playwright.sync_api import expect

    page = watched.page
    page.goto(server.url("/ui/#/signin"))
    expect(page.locator("#signin-admin-token")).to_contain_text("horarium-data/admin-token")
    other = Api(server, f"sub-{uuid.uuid4().hex[:8]}")
    elsewhere = other.new_collection()
    sign_in(page, server, api.subscription)
    expect(page.locator("h1")).to_have_text(f"Job collections of {api.subscription}")
    page.fill("#who-subscription", other.subscription)
    page.press("#who-subscription", "Enter")
    expect(page.locator("h1")).to_have_text(f"Job collections of {other.subscription}")
    expect(page.locator("main")).to_contain_text(elsewhere)
    assert page.evaluate("sessionStorage.getItem('horarium.subscription')") == other.subscription

    # A key of one subscription is refused another: the refusal shows, the session stays.
    scoped = forkserver.run(
        [sys.executable, "-m", "horarium.cli", "keys", "create", "--subscription",
         other.subscription, "--role", "reader", "--data-dir", str(server.data_dir)],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout.strip()  # fmt: skip
    page.click("#sign-out")
    sign_in(page, server, other.subscription, token=scoped)
    expect(page.locator("h1")).to_have_text(f"Job collections of {other.subscription}")
    page.fill("#who-subscription", api.subscription)
    page.click("#switch-go")
    expect(page.locator("#switch-error")).to_contain_text("does not have authorization")
    expect(page.locator("h1")).to_have_text(f"Job collections of {other.subscription}")
    assert page.evaluate("sessionStorage.getItem('horarium.token')") == scoped

    page.goto(server.url("/docs"))
    first = page.locator(".opblock-summary").first
    first.click()
    page.click(".try-out__btn")
    field = page.locator("input[placeholder^='api-version']").first
    expect(field).to_have_value("2016-03-01")
    page.click("nav.horarium-back a")
    expect(page).to_have_url(re.compile(r"/ui/"))


def test_editing_a_job_changes_what_the_form_changed_and_keeps_its_secret(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect
    from sqlalchemy import select

    from horarium.store.core.schema import jobs
    from tests.ui.ui_support import in_database, job_id

    page = watched.page
    collection = api.new_collection()
    secret = {"type": "Basic", "username": "robot", "password": "s3cret-pw"}
    body = {
        "properties": {
            "startTime": "2090-01-01T00:00:00Z",
            "action": {
                "type": "Http",
                "request": {"uri": f"{target}/ok", "method": "POST", "authentication": secret},
            },
            "recurrence": {"frequency": "Hour", "interval": 1},
        }
    }
    assert api.put(api.job(collection, "guarded"), body).status_code == 201
    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/guarded")
    expect(page.locator("#job-definition")).to_contain_text('"username": "robot"')
    expect(page.locator("#job-definition")).not_to_contain_text("s3cret-pw")
    page.click("#job-edit")
    expect(page.locator("#preview-list .utc")).to_have_count(10)  # the masked secret is no error
    page.fill("#interval", "2")
    page.click("#tab-json")
    expect(page.locator("#raw-json")).to_have_value(re.compile(r'"interval": 2'))
    page.click("#tab-form")
    page.click("#job-save")
    expect(page.locator("h1")).to_have_text("guarded")

    properties = api.get(api.job(collection, "guarded")).json()["properties"]
    assert properties["recurrence"]["interval"] == 2
    assert properties["action"]["request"]["method"] == "POST"

    row = job_id(server, collection, "guarded")

    async def stored(conn: Any) -> Any:
        return (await conn.execute(select(jobs.c.definition).where(jobs.c.id == row))).scalar_one()

    # The stored password (sealed at rest) is still the one given: the edit did not touch it.
    keyring = read_key_file(server.data_dir / "secret.key")
    definition = unseal_definition(in_database(server, stored), keyring)
    assert definition["action"]["request"]["authentication"]["password"] == "s3cret-pw"


def test_editing_an_exponential_job_keeps_its_backoff(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    backoff = {"retryType": "Exponential", "retryInterval": "PT20S", "maxRetryInterval": "PT1H"}
    body = {
        "properties": {
            "startTime": "2090-01-01T00:00:00Z",
            "action": {
                "type": "Http",
                "request": {"uri": f"{target}/ok", "method": "POST"},
                "retryPolicy": backoff,
            },
            "recurrence": {"frequency": "Hour", "interval": 1},
        }
    }
    assert api.put(api.job(collection, "backoff"), body).status_code == 201
    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/backoff")
    page.click("#job-edit")
    expect(page.locator("#retryType")).to_have_value("Exponential")
    expect(page.locator("#maxRetryInterval")).to_have_value("01:00:00")
    page.fill("#maxRetryInterval", "02:00:00")
    page.click("#job-save")
    expect(page.locator("h1")).to_have_text("backoff")

    policy = api.get(api.job(collection, "backoff")).json()["properties"]["action"]["retryPolicy"]
    assert policy == {
        "retryType": "exponential",
        "retryInterval": "00:00:20",
        "maxRetryInterval": "02:00:00",
    }


def test_a_paused_job_page_shows_until_when_and_why(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    body = {
        "properties": {
            "state": "Disabled",
            "pause": {"until": "2090-01-02T03:04:00Z", "reason": "supplier maintenance"},
            "action": {"type": "Http", "request": {"uri": f"{target}/ok", "method": "POST"}},
            "recurrence": {"frequency": "Hour", "interval": 1},
        }
    }
    assert api.put(api.job(collection, "paused"), body).status_code == 201
    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/paused")
    summary = page.locator("dl.summary")
    expect(summary).to_contain_text("Paused")
    expect(summary).to_contain_text("2090-01-02 03:04")
    expect(summary).to_contain_text("supplier maintenance")


def test_editing_a_job_keeps_the_extensions_the_form_does_not_edit(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    calendar = api.collection(collection) + "/calendars/closed"
    assert api.put(calendar, {"properties": {"dates": ["2091-01-01"]}}).status_code == 201
    body = {
        "properties": {
            "state": "Disabled",
            "pause": {"until": "2090-01-02T03:04:00Z", "reason": "supplier maintenance"},
            "executionPolicy": {
                "overlap": "Skip",
                "missed": "RunAll",
                "catchUpWindow": "PT2H",
                "deadlines": {"startWithin": "PT5M", "finishWithin": "01:00:00"},
            },
            "action": {
                "type": "Http",
                "templated": True,
                "request": {"uri": f"{target}/ok/{{{{jobName}}}}", "method": "POST"},
            },
            "recurrence": {
                "cron": "0 9 * * MON-FRI",
                "jitter": "00:05:00",
                "excludeCalendars": ["closed"],
                "onExcluded": "Skip",
            },
        }
    }
    assert api.put(api.job(collection, "kept"), body).status_code == 201, "created"
    before = api.get(api.job(collection, "kept")).json()["properties"]

    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/kept")
    summary = page.locator("dl.summary")
    expect(summary).to_contain_text(
        "Overlap: Skip · Missed: RunAll (catch-up window 02:00:00)"
        " · Start within: 00:05:00 · Finish within: 01:00:00"
    )
    expect(page.locator("#job-upcoming #execution-policy")).to_contain_text("Overlap: Skip")
    page.click("#job-edit")
    expect(page.locator("#cron")).to_have_value("0 9 * * MON-FRI")
    expect(page.locator("#preview #execution-policy")).to_contain_text("Missed: RunAll")
    page.fill("#uri", f"{target}/ok/{{{{jobName}}}}/edited")
    page.click("#job-save")
    expect(page.locator("h1")).to_have_text("kept")

    after = api.get(api.job(collection, "kept")).json()["properties"]
    assert after["action"]["request"]["uri"].endswith("/ok/{{jobName}}/edited")
    after["action"]["request"]["uri"] = before["action"]["request"]["uri"]
    assert after == before  # pause, executionPolicy, templated, cron, jitter, calendars kept
    assert after["executionPolicy"]["deadlines"] == {
        "startWithin": "00:05:00",
        "finishWithin": "01:00:00",
    }
    assert after["pause"]["reason"] == "supplier maintenance"
    assert after["state"].lower() == "disabled"


def test_schedules_read_as_clock_times_and_a_cron_job_is_not_one_time(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    api.new_job(collection, "weekdays", f"{target}/ok", recurrence={"cron": "0 9 * * MON-FRI"})
    api.new_job(
        collection,
        "daily",
        f"{target}/ok",
        recurrence={
            "frequency": "Day",
            "schedule": {"hours": [7], "minutes": [0, 30]},
            "timeZone": "Europe/Paris",
        },
    )
    api.new_job(collection, "once", f"{target}/ok", startTime="2090-01-01T00:00:00Z")

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    rows = page.locator("#jobs-list tbody tr")
    expect(rows).to_have_count(3)
    # The API's one describer (`$expand=scheduleDescription`), not the page's own.
    expect(rows.filter(has_text="weekdays")).to_contain_text("weekdays at 09:00 UTC")
    expect(rows.filter(has_text="daily")).to_contain_text(
        "every day at 07:00 and 07:30 Europe/Paris"
    )
    expect(rows.filter(has_text="once")).to_contain_text("once at 2090-01-01 00:00 UTC")
    page.goto(server.url(f"/ui/#/job/rg1/{collection}/weekdays"))
    summary = page.locator("dl.summary")
    expect(summary).to_contain_text("weekdays at 09:00 UTC")
    expect(summary).not_to_contain_text("once")


def test_skipped_history_overdue_executions_and_the_policy_show_on_the_job_page(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from datetime import timedelta

    from playwright.sync_api import expect

    from tests.ui.ui_support import add_history, job_id, update_job

    page = watched.page
    # Before the job exists: were the wait to cross the hour, this server's engine would run the
    # job's execution due at that hour (a third history row).
    hour = hour_with_room()
    collection = api.new_collection()
    api.new_job(
        collection,
        "serial",
        f"{target}/ok",
        startTime="2024-01-01T00:00:00Z",
        recurrence={"frequency": "Hour"},
        executionPolicy={"overlap": "Skip"},
    )
    row = job_id(server, collection, "serial")
    # Its execution of three hours ago is held by a (made-up) process, so this server's engine
    # leaves the job alone; the executions due after it have not run.
    update_job(
        server,
        row,
        schedule_set_at=hour - timedelta(days=1),
        next_execution_at=hour - timedelta(hours=3),
        next_repeat=22,
        lease_owner="elsewhere:1:1",
        lease_expires_at=hour + timedelta(hours=2),
    )
    skipped = "Skipped: the execution expected at … fell due while the job's previous execution"
    entry = {"action_name": "MainAction", "retry_count": 0, "repeat_count": 20}
    times = {"expected_execution_time": hour, "start_time": hour, "end_time": hour}
    add_history(
        server,
        row,
        [
            {**entry, **times, "status": "Completed", "message": "200 OK"},
            {**entry, **times, "status": "Skipped", "message": skipped},
        ],
    )

    signed_in_at(page, server, api.subscription, f"#/job/rg1/{collection}/serial")
    expect(page.locator("#job-history .history-row")).to_have_count(2)
    badge = page.locator("#job-history .badge-skipped")
    expect(badge).to_have_text("Skipped")
    colours = page.evaluate(
        """() => ['.badge-skipped', '.badge-completed'].map(
            (s) => getComputedStyle(document.querySelector('#job-history ' + s)).color)"""
    )
    assert colours[0] != colours[1]
    page.select_option("#history-status", "Skipped")
    expect(page.locator("#job-history .history-row")).to_have_count(1)
    expect(page.locator("#job-history .history-row")).to_contain_text("fell due while")

    upcoming = page.locator("#job-upcoming")
    expect(upcoming.locator("#execution-policy")).to_have_text("Overlap: Skip · Missed: RunLatest")
    # The one of three hours ago is in flight (held): it runs. Of those due after it (two hours
    # ago, one, and this hour's), RunLatest runs the latest and records the others Postponed.
    overdue = upcoming.locator("tr.overdue-row")
    expect(overdue).to_have_count(3)
    expect(overdue.nth(0)).to_contain_text("postponed if missed")
    expect(overdue.nth(1)).to_contain_text("postponed if missed")
    expect(overdue.nth(2)).to_contain_text("runs if missed")


def test_a_paused_collection_shows_until_when_and_why(
    watched: Watched, server: ServerProcess, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = f"jc{uuid.uuid4().hex[:6]}"
    body = {
        "location": "West US",
        "properties": {
            "sku": {"name": "Standard"},
            "state": "Disabled",
            "pause": {"until": "2090-05-06T07:08:00Z", "reason": "datacentre move"},
        },
    }
    assert api.put(api.collection(collection), body).status_code == 201
    sign_in(page, server, api.subscription)
    expect(page.locator("h1")).to_contain_text("Job collections")
    listed = page.locator("tr", has_text=collection)
    expect(listed).to_contain_text("until 2090-05-06 07:08:00 UTC — datacentre move")
    page.click(f"text={collection}")
    expect(page.locator("h1")).to_have_text(collection)
    note = page.locator("#collection-pause")
    expect(note).to_contain_text("Paused until 2090-05-06 07:08:00 UTC")
    expect(note).to_contain_text("datacentre move")


def test_a_collection_page_lists_its_calendars_and_a_calendar_page_shows_one(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    calendars = api.collection(collection) + "/calendars/"
    business = {
        "weekends": True,
        "holidays": {"country": "US", "subdivision": "NY"},
        "dates": ["2031-12-24", "2031-12-31"],
        "ranges": [{"start": "2031-07-01T12:00:00", "end": "2031-07-01T18:00:00"}],
    }
    assert api.put(calendars + "Business", {"properties": business}).status_code == 201
    assert (
        api.put(calendars + "spare", {"properties": {"dates": ["2031-05-01"]}}).status_code == 201
    )
    recurrence = {
        "frequency": "Day",
        "timeZone": "America/New_York",
        "excludeCalendars": ["business"],
    }
    for job in ("nightly", "report"):
        body = {
            "properties": {
                "state": "Disabled",
                "action": {"type": "Http", "request": {"uri": f"{target}/ok", "method": "GET"}},
                "recurrence": recurrence,
            }
        }
        assert api.put(api.job(collection, job), body).status_code == 201

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    rows = page.locator("#calendars tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Business")
    expect(rows.nth(0)).to_contain_text("weekends, holidays US/NY, 2 dates, 1 range")
    expect(rows.nth(0)).to_contain_text("nightly, report")
    expect(rows.nth(1)).to_contain_text("spare")
    expect(rows.nth(1)).to_contain_text("no job")

    rows.nth(0).get_by_role("link", name="Business").click()
    expect(page.locator("h1")).to_have_text("Business")
    summary = page.locator("#calendar-summary")
    expect(summary).to_contain_text("Saturdays and Sundays")
    expect(summary).to_contain_text("public holidays of US/NY")
    expect(summary).to_contain_text("2031-12-24, 2031-12-31")
    expect(summary).to_contain_text("2031-07-01T12:00:00")
    summary.get_by_role("link", name="report").click()
    expect(page.locator("h1")).to_contain_text("report")


def test_a_job_every_few_seconds_reads_and_edits_in_the_form(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection(sku="Seconds")
    recurrence = {"frequency": "Second", "interval": 30}
    api.new_job(
        collection, "often", f"{target}/ok", startTime="2090-01-01T00:00:00Z", recurrence=recurrence
    )
    signed_in_at(page, server, api.subscription, f"#/edit/rg1/{collection}/often")
    expect(page.locator("#frequency")).to_have_value("Second")
    expect(page.locator("#preview-list .utc").nth(1)).to_contain_text("00:00:30")
    page.fill("#interval", "15")
    page.click("#job-save")
    expect(page.locator("h1")).to_have_text("often")
    assert api.get(api.job(collection, "often")).json()["properties"]["recurrence"] == {
        "frequency": "second",
        "interval": 15,
    }


def test_a_calendar_lists_its_days_and_is_edited_with_a_preview_of_its_jobs(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    from datetime import UTC, datetime, timedelta

    from playwright.sync_api import expect

    page = watched.page
    today = datetime.now(UTC).date()
    closed, added = (today + timedelta(days=n) for n in (3, 10))
    collection = api.new_collection()
    calendar = api.collection(collection) + "/calendars/closures"
    assert api.put(calendar, {"properties": {"dates": [closed.isoformat()]}}).status_code == 201
    body = {
        "properties": {
            "state": "Disabled",
            "action": {"type": "Http", "request": {"uri": f"{target}/ok", "method": "GET"}},
            "recurrence": {"frequency": "Day", "excludeCalendars": ["closures"]},
            "startTime": f"{today.isoformat()}T12:00:00Z",
        }
    }
    assert api.put(api.job(collection, "nightly"), body).status_code == 201

    signed_in_at(page, server, api.subscription, f"#/calendar/rg1/{collection}/closures")
    days = page.locator("#excluded-days tbody tr")
    expect(days).to_have_count(1)
    expect(days.first).to_contain_text(closed.isoformat())
    expect(days.first).to_contain_text("listed date")
    effects = page.locator("#calendar-effects [data-job=nightly] tbody tr")
    expect(effects).to_have_count(1)
    expect(effects.first).to_contain_text(f"{closed.isoformat()} 12:00:00")
    expect(effects.first).to_contain_text("skipped")

    page.click("#calendar-edit")
    expect(page.locator("h1")).to_have_text("Edit calendar closures")
    expect(page.locator("#calendar-dates")).to_have_value(closed.isoformat())
    page.fill("#calendar-dates", f"{closed.isoformat()}\n{added.isoformat()}")
    planned = page.locator("#preview-effects [data-job=nightly] tbody tr")
    expect(planned).to_have_count(2)
    expect(planned.nth(1)).to_contain_text(added.isoformat())
    expect(planned.nth(1)).to_contain_text("new")
    expect(planned.nth(0)).to_contain_text("as now")

    ics = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:audit@test\r\nDTSTART;VALUE=DATE:{(today + timedelta(days=5)).strftime('%Y%m%d')}"
        "\r\nSUMMARY:Yearly audit\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    page.set_input_files(
        "#calendar-ical-file",
        files=[{"name": "audit.ics", "mimeType": "text/calendar", "buffer": ics.encode()}],
    )
    expect(page.locator("#calendar-ical-note")).to_contain_text("audit.ics")
    expect(page.locator("#preview-days")).to_contain_text("iCalendar event: Yearly audit")
    expect(planned).to_have_count(3)

    page.fill("#calendar-dates", "2031-02-30")
    expect(page.locator("#calendar-dates-error")).to_contain_text("properties.dates[0]")
    expect(page.locator("#calendar-dates")).to_have_attribute("aria-invalid", "true")
    page.fill("#calendar-dates", f"{closed.isoformat()}, {added.isoformat()}")
    expect(page.locator("#calendar-dates-error")).to_be_empty()
    page.click("#calendar-save")
    expect(page.locator("h1")).to_have_text("closures")
    stored = api.get(calendar).json()["properties"]
    assert stored["dates"] == [closed.isoformat(), added.isoformat()]
    assert "Yearly audit" in stored["ical"]
    expect(page.locator("#excluded-days tbody tr")).to_have_count(3)

    page.goto(server.url(f"/ui/#/jobs/rg1/{collection}"))
    expect(page.locator("h1")).to_have_text(collection)  # the collection's page, loaded
    expect(page.locator("#calendars")).to_contain_text("closures")
    page.click("#calendar-new")
    expect(page.locator("h1")).to_have_text("New calendar")
    page.fill("#calendar-name", "business")
    page.check("#calendar-weekends")
    page.fill("#calendar-country", "US")
    expect(page.locator("#preview-days")).to_contain_text("weekend: Saturday")
    page.fill("#calendar-subdivision", "ZZ")
    expect(page.locator("#calendar-subdivision-error")).to_contain_text("not known")
    page.fill("#calendar-subdivision", "NY")
    expect(page.locator("#calendar-subdivision-error")).to_be_empty()
    page.click("#calendar-save")
    expect(page.locator("h1")).to_have_text("business")
    created = api.get(api.collection(collection) + "/calendars/business").json()["properties"]
    assert created == {"holidays": {"country": "US", "subdivision": "NY"}, "weekends": True}


def test_a_monitor_shows_its_status_history_and_a_new_ping_url_and_a_job_its_deadlines(
    watched: Watched, server: ServerProcess, target: str, api: Api
) -> None:
    import httpx
    from playwright.sync_api import expect

    page = watched.page
    collection = api.new_collection()
    base = api.collection(collection)
    weekends = {"properties": {"weekends": True}}
    assert api.put(base + "/calendars/weekends", weekends).status_code == 201
    recurrence = {"cron": "0 6 * * *", "excludeCalendars": ["weekends"]}
    made = api.put(base + "/monitors/backup", {"properties": {"recurrence": recurrence}})
    assert made.status_code == 201, made.text
    first_url = made.json()["properties"]["pingUrl"]
    assert httpx.post(first_url + "/start", timeout=30).status_code == 200
    assert httpx.post(first_url, content=b"42 files copied", timeout=30).status_code == 200
    deadlines = {"deadlines": {"startWithin": "PT5M", "finishWithin": "01:00:00"}}
    api.new_job(collection, "nightly", f"{target}/ok", state="Disabled", executionPolicy=deadlines)

    signed_in_at(page, server, api.subscription, f"#/jobs/rg1/{collection}")
    page.click("#monitors-link")
    row = page.locator("#monitors-list .monitor-row")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("backup")
    expect(row.locator(".monitor-status")).to_have_text("Up")
    expect(row).to_contain_text("cron 0 6 * * *, excluding weekends")
    row.locator("a").click()

    expect(page.locator("h1")).to_have_text("backup")
    expect(page.locator("#monitor-summary")).to_contain_text("Up")
    checkins = page.locator("#monitor-history .checkin-row")
    expect(checkins).to_have_count(2)
    expect(checkins.nth(0)).to_contain_text("Success")
    expect(checkins.nth(0)).to_contain_text("42 files copied")
    expect(checkins.nth(1)).to_contain_text("Start")
    upcoming = page.locator("#monitor-upcoming")
    expect(upcoming.locator(".calendar-skipped").first).to_contain_text("excluded by weekends")

    # a new ping URL, behind a confirmation; the old one stops working
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("#ping-regenerate")
    page.click("#confirm-ok")
    field = page.locator("#ping-url")
    expect(field).to_have_value(re.compile(re.escape(server.base_url) + "/ping/.{40,}"))
    new_url = field.input_value()
    page.click("#ping-copy")
    expect(page.locator("#ping-copied")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == new_url
    assert httpx.get(first_url, timeout=30).status_code == 404
    assert httpx.get(new_url + "/fail", timeout=30).status_code == 200
    page.click("#checkins-refresh")
    expect(checkins).to_have_count(3)
    expect(checkins.nth(0)).to_contain_text("Fail")
    expect(page.locator("#monitor-summary")).to_contain_text("Down")

    page.goto(server.url(f"/ui/#/job/rg1/{collection}/nightly"))
    expect(page.locator("#job-summary dl.summary")).to_contain_text(
        "Start within: 00:05:00 · Finish within: 01:00:00"
    )
