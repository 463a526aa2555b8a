"""Beyond Azure: `properties.pause` of a Disabled job or collection, through the real server on
SQLite and PostgreSQL (the engine's side: tests/engine/test_pauses.py)."""

from __future__ import annotations

from tests.api.api_client import Api, error_of, http_job

PAUSE = {"until": "2031-02-03T04:05:06Z", "reason": "vendor maintenance window"}


def test_a_disabled_job_shows_its_pause_and_enabling_it_ends_the_pause(api: Api) -> None:
    name = api.new_collection()
    path = api.job(name, "paused")
    created = api.put(path, http_job(state="Disabled", pause=PAUSE))
    assert created.status_code == 201, created.text
    assert created.json()["properties"]["pause"] == PAUSE
    assert api.get(path).json()["properties"]["pause"] == PAUSE

    reason = api.patch(path, {"properties": {"pause": {"reason": "extended"}}})
    assert reason.status_code == 200, reason.text
    assert reason.json()["properties"]["pause"] == {**PAUSE, "reason": "extended"}

    enabled = api.patch(path, {"properties": {"state": "Enabled"}})
    assert enabled.status_code == 200, enabled.text
    assert "pause" not in enabled.json()["properties"]


def test_a_pause_is_refused_unless_the_job_is_disabled_or_when_until_is_not_an_instant(
    api: Api,
) -> None:
    name = api.new_collection()
    path = api.job(name, "refused")
    enabled = api.put(path, http_job(pause=PAUSE))
    assert enabled.status_code == 400
    assert error_of(enabled)["message"].startswith(
        "properties.pause: only a Disabled job can be paused"
    )
    for pause, field in (
        ({"reason": "no end"}, "properties.pause.until: required"),
        ({"until": "soon"}, "properties.pause.until: 'soon' is not an ISO 8601"),
        ({"until": PAUSE["until"], "reason": 7}, "properties.pause.reason: must be a string"),
        ({"until": PAUSE["until"], "by": "me"}, "properties.pause.by: unknown property"),
    ):
        response = api.put(path, http_job(state="Disabled", pause=pause))
        assert response.status_code == 400, response.text
        assert error_of(response)["message"].startswith(field)
    assert api.get(path).status_code == 404  # nothing half-stored


def test_a_disabled_collection_shows_its_pause_and_its_enable_ends_it(api: Api) -> None:
    name = api.new_collection(state="Disabled", pause=PAUSE)
    assert api.get(api.collection(name)).json()["properties"]["pause"] == PAUSE
    refused = api.patch(api.collection(name), {"properties": {"state": "Suspended"}})
    assert refused.status_code == 400
    assert error_of(refused)["message"].startswith(
        "properties.pause: only a Disabled collection can be paused"
    )
    assert api.post(api.collection(name) + "/enable").status_code == 200
    shown = api.get(api.collection(name)).json()["properties"]
    assert shown["state"] == "Enabled"
    assert "pause" not in shown
