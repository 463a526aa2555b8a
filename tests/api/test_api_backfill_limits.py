"""`POST …/backfill` is bounded per job, not only per call: a job has at most 1,000 backfill
executions not yet finished, so repeating a call cannot queue more (the server here runs no
engine, so what is queued stays pending)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from tests.api.api_client import Api, error_of, http_job

START = datetime(2024, 5, 1, tzinfo=UTC)


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _backfill(api: Api, job: str, minutes_from: int, minutes: int) -> httpx.Response:
    start = START + timedelta(minutes=minutes_from)
    return api.post(
        job + "/backfill",
        {"from": _iso(start), "to": _iso(start + timedelta(minutes=minutes))},
    )


def test_a_job_has_at_most_a_thousand_backfill_executions_pending(api: Api) -> None:
    name = api.new_collection()
    job = api.job(name, "minutely")
    body = http_job(recurrence={"frequency": "Minute", "interval": 1})
    body["properties"]["startTime"] = "2020-01-01T00:00:00Z"
    assert api.put(job, body).status_code == 201

    first = _backfill(api, job, 0, 600)
    assert first.status_code == 200 and first.json()["queued"] == 600, first.text
    again = _backfill(api, job, 600, 600)
    assert again.status_code == 409, again.text
    error = error_of(again)
    assert error["code"] == "BackfillPendingLimit", error
    assert "600 backfill executions" in error["message"] and "1000" in error["message"], error
    rest = _backfill(api, job, 600, 400)  # nothing of the refused call was queued
    assert rest.status_code == 200 and rest.json()["queued"] == 400, rest.text
    assert _backfill(api, job, 1000, 1).status_code == 409
