"""Plans and quotas: a breach is a 409 naming the limit; a collection's quota only tightens."""

from __future__ import annotations

from tests.api.api_client import Api, error_of, http_job


def test_free_plan_allows_five_jobs(api: Api) -> None:
    name = api.new_collection("Free")
    for i in range(5):
        assert api.put(api.job(name, f"j{i}"), http_job()).status_code == 201
    sixth = api.put(api.job(name, "j5"), http_job())
    assert sixth.status_code == 409
    assert "limited to 5 jobs by the Free plan" in error_of(sixth)["message"]
    assert api.put(api.job(name, "j0"), http_job()).status_code == 200  # replacing is fine
    api.delete(api.job(name, "j0"))
    assert api.put(api.job(name, "j5"), http_job()).status_code == 201


def test_free_plan_runs_at_most_hourly_and_without_outbound_authentication(api: Api) -> None:
    name = api.new_collection("Free")
    hourly = http_job(recurrence={"frequency": "Hour", "interval": 1})
    assert api.put(api.job(name, "hourly"), hourly).status_code == 201
    for recurrence in (
        {"frequency": "Minute", "interval": 30},
        {"frequency": "Day", "schedule": {"minutes": [0, 30]}},
        {"frequency": "Day", "schedule": {"hours": [1, 2], "minutes": [50, 5]}},
    ):
        response = api.put(api.job(name, "often"), http_job(recurrence=recurrence))
        assert response.status_code == 409, recurrence
        message = error_of(response)["message"]
        assert "at most every 1 hour" in message and "Free plan" in message
    body = http_job()
    body["properties"]["action"]["request"]["authentication"] = {
        "type": "Basic",
        "username": "u",
        "password": "p",
    }
    response = api.put(api.job(name, "auth"), body)
    assert response.status_code == 409
    assert "Free plan does not allow outbound authentication" in error_of(response)["message"]
    # A PATCH cannot sneak it in either.
    response = api.patch(
        api.job(name, "hourly"),
        {"properties": {"recurrence": {"interval": None, "frequency": "Minute"}}},
    )
    assert response.status_code == 409
    assert (
        api.get(api.job(name, "hourly")).json()["properties"]["recurrence"]["frequency"] == "hour"
    )


def test_collection_quota_tightens_the_plan(api: Api) -> None:
    name = api.new_collection(
        quota={"maxJobCount": 2, "maxRecurrence": {"frequency": "Day", "interval": 1}}
    )
    daily = http_job(recurrence={"frequency": "Day", "interval": 1})
    assert api.put(api.job(name, "a"), daily).status_code == 201
    assert api.put(api.job(name, "b"), daily).status_code == 201
    third = api.put(api.job(name, "c"), daily)
    assert third.status_code == 409
    assert "limited to 2 jobs by the collection's quota.maxJobCount" in error_of(third)["message"]
    api.delete(api.job(name, "b"))
    hourly = api.put(api.job(name, "c"), http_job(recurrence={"frequency": "Hour", "interval": 12}))
    assert hourly.status_code == 409
    assert "quota.maxRecurrence" in error_of(hourly)["message"]
    weekly = http_job(
        recurrence={"frequency": "Week", "schedule": {"weekDays": ["Monday", "Tuesday"]}}
    )
    assert api.put(api.job(name, "c"), weekly).status_code == 201


def test_a_quota_looser_than_the_plan_is_refused(api: Api) -> None:
    for sku, quota, field in (
        ("Standard", {"maxJobCount": 51}, "maxJobCount"),
        ("P20Premium", {"maxJobCount": 1001}, "maxJobCount"),
        ("Free", {"maxRecurrence": {"frequency": "Minute", "interval": 30}}, "maxRecurrence"),
    ):
        body = {"location": "West US", "properties": {"sku": {"name": sku}, "quota": quota}}
        response = api.put(api.collection(f"loose{sku}"), body)
        assert response.status_code == 409, (sku, response.text)
        assert f"properties.quota.{field}" in error_of(response)["message"]
        assert sku in error_of(response)["message"]
    ok = {
        "location": "West US",
        "properties": {"sku": {"name": "P20Premium"}, "quota": {"maxJobCount": 1000}},
    }
    assert api.put(api.collection("premium"), ok).status_code == 201


def test_limits_that_existing_jobs_break_are_refused(api: Api) -> None:
    name = api.new_collection("Standard")
    every_minute = http_job(recurrence={"frequency": "Minute", "interval": 1})
    api.put(api.job(name, "fast"), every_minute)
    downgrade = api.patch(api.collection(name), {"properties": {"sku": {"name": "Free"}}})
    assert downgrade.status_code == 409
    assert "Job 'fast'" in error_of(downgrade)["message"]
    fewer = api.patch(api.collection(name), {"properties": {"quota": {"maxJobCount": 0}}})
    assert fewer.status_code == 400  # at least 1
    api.put(api.job(name, "second"), http_job())
    fewer = api.patch(api.collection(name), {"properties": {"quota": {"maxJobCount": 1}}})
    assert fewer.status_code == 409
    assert "has 2 jobs" in error_of(fewer)["message"]
    assert api.get(api.collection(name)).json()["properties"]["sku"]["name"] == "Standard"


def test_concurrent_creates_respect_the_job_limit(api: Api) -> None:
    """Twelve clients race to create jobs in a collection that holds five: exactly five win."""
    from concurrent.futures import ThreadPoolExecutor

    name = api.new_collection(quota={"maxJobCount": 5})

    def create(i: int) -> int:
        return api.put(api.job(name, f"race{i}"), http_job()).status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = sorted(pool.map(create, range(12)))
    assert statuses == [201] * 5 + [409] * 7
    assert len(api.get(api.collection(name) + "/jobs").json()["value"]) == 5

    def create_collection(_: int) -> int:
        body = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
        return api.put(api.collection("samename"), body).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = sorted(pool.map(create_collection, range(8)))
    assert statuses == [200] * 7 + [201]


def test_azure_plans_keep_their_minute_and_the_seconds_plan_allows_seconds(api: Api) -> None:
    standard = api.new_collection("Standard")
    for recurrence in (
        {"frequency": "Second", "interval": 30},
        {"cron": "*/10 * * * * *"},
    ):
        response = api.put(api.job(standard, "often"), http_job(recurrence=recurrence))
        assert response.status_code == 409, recurrence
        message = error_of(response)["message"]
        assert "at most every 1 minute, set by the Standard plan; the Seconds plan allows" in (
            message
        )
    # Six fields on the minute are fine on any plan that allows the minute.
    five = http_job(recurrence={"cron": "0 */5 * * * *"})
    assert api.put(api.job(standard, "five"), five).status_code == 201

    seconds = api.new_collection("Seconds")
    assert api.get(api.collection(seconds)).json()["properties"]["sku"] == {"name": "Seconds"}
    body = http_job(recurrence={"frequency": "second", "interval": 10})
    body["properties"]["startTime"] = "2030-01-01T00:00:00Z"
    created = api.put(api.job(seconds, "tens"), body)
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["recurrence"] == {"frequency": "second", "interval": 10}
    listed = api.get(api.job(seconds, "tens") + "/upcoming", params={"count": 3}).json()["value"]
    assert [e["executionTime"] for e in listed] == [
        "2030-01-01T00:00:00Z",
        "2030-01-01T00:00:10Z",
        "2030-01-01T00:00:20Z",
    ]
    cron = http_job(recurrence={"cron": "*/15 * * * * *"})
    assert api.put(api.job(seconds, "cron"), cron).status_code == 201
