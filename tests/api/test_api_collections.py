"""Job collections: create / replace / patch / get / list / delete / enable / disable."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.api.api_client import Api, add_history, error_of, http_job


def test_create_is_201_and_echoes_the_live_wire_form(api: Api) -> None:
    path = api.collection("myjobcollection")
    created = api.put(path, {"location": "westus", "properties": {"sku": {"name": "Free"}}})
    assert created.status_code == 201
    assert created.headers["content-type"] == "application/json; charset=utf-8"
    assert created.json() == {
        "id": f"/subscriptions/{api.subscription}/resourceGroups/rg1/providers"
        "/Microsoft.Scheduler/jobCollections/myjobcollection",
        "type": "Microsoft.Scheduler/jobCollections",
        "name": "myjobcollection",
        "location": "West US",  # the live service answered "westus" with its display name
        "properties": {"sku": {"name": "Free"}, "state": "Enabled"},  # no quota when not given
    }
    assert api.get(path).json() == created.json()


def test_put_again_replaces_with_200(api: Api) -> None:
    path = api.collection("jc1")
    first = {
        "location": "South Central US",
        "tags": {"department": "marketing"},
        "properties": {
            "sku": {"name": "P10Premium"},
            "state": "Enabled",
            "quota": {"maxJobCount": 50, "maxRecurrence": {"frequency": "Day", "interval": 2}},
        },
    }
    assert api.put(path, first).status_code == 201
    replaced = api.put(
        path, {"location": "South Central US", "properties": {"sku": {"name": "Standard"}}}
    )
    assert replaced.status_code == 200
    body = api.get(path).json()
    assert "tags" not in body and "quota" not in body["properties"]
    assert body["properties"] == {"sku": {"name": "Standard"}, "state": "Enabled"}


def test_quota_frequency_comes_back_lowercase_and_state_pascal_case(api: Api) -> None:
    body = {
        "name": "jc15447",
        "location": "South Central US",
        "properties": {
            "sku": {"name": "standard"},
            "state": "suspended",
            "quota": {"maxJobCount": 20, "maxRecurrence": {"frequency": "WEEK", "interval": 1}},
        },
    }
    response = api.put(api.collection("jc15447"), body)
    assert response.status_code == 201, response.text
    assert response.json()["properties"] == {
        "sku": {"name": "Standard"},
        "state": "Suspended",
        "quota": {"maxJobCount": 20, "maxRecurrence": {"frequency": "week", "interval": 1}},
    }


def test_patch_with_tags_only_keeps_sku_state_and_quota(api: Api) -> None:
    path = api.collection("patched")
    api.put(
        path,
        {
            "location": "West US",
            "tags": {"a": "1", "b": "2"},
            "properties": {
                "sku": {"name": "Standard"},
                "state": "Enabled",
                "quota": {"maxJobCount": 10, "maxRecurrence": {"frequency": "Hour", "interval": 1}},
            },
        },
    )
    patched = api.patch(path, {"tags": {"department": "finance"}})
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert body["tags"] == {"department": "finance"}  # tags are replaced as a whole (ARM)
    assert body["properties"] == {
        "sku": {"name": "Standard"},
        "state": "Enabled",
        "quota": {"maxJobCount": 10, "maxRecurrence": {"frequency": "hour", "interval": 1}},
    }
    quota_patch = api.patch(path, {"properties": {"quota": {"maxJobCount": 5}}})
    assert quota_patch.json()["properties"]["quota"] == {
        "maxJobCount": 5,
        "maxRecurrence": {"frequency": "hour", "interval": 1},
    }


def test_lists_by_resource_group_and_by_subscription(api: Api) -> None:
    for group, name in (("rg-a", "zeta"), ("rg-a", "alpha"), ("rg-b", "beta")):
        body = {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
        assert api.put(api.collection(name, group), body).status_code == 201
    in_group = api.get(
        f"/subscriptions/{api.subscription}/resourceGroups/rg-a/providers/Microsoft.Scheduler/jobCollections"
    ).json()
    assert [c["name"] for c in in_group["value"]] == ["alpha", "zeta"]
    assert in_group["nextLink"] is None and "nextLink" in in_group
    everywhere = api.get(
        f"/subscriptions/{api.subscription}/providers/Microsoft.Scheduler/jobCollections"
    ).json()
    assert sorted(c["name"] for c in everywhere["value"]) == ["alpha", "beta", "zeta"]
    other = Api(api.server)
    empty = other.get(
        f"/subscriptions/{other.subscription}/providers/Microsoft.Scheduler/jobCollections"
    )
    assert empty.json() == {"value": [], "nextLink": None}


def test_names_and_path_words_match_case_insensitively(api: Api) -> None:
    api.put(
        api.collection("MixedCase"),
        {"location": "West US", "properties": {"sku": {"name": "Standard"}}},
    )
    path = (
        f"/SUBSCRIPTIONS/{api.subscription.upper()}/resourcegroups/RG1/PROVIDERS"
        "/microsoft.scheduler/JOBCOLLECTIONS/mixedcase"
    )
    response = api.get(path)
    assert response.status_code == 200, response.text
    assert response.json()["name"] == "MixedCase"  # the spelling it was created with


def test_delete_is_200_empty_and_removes_jobs_and_history(api: Api) -> None:
    name = api.new_collection()
    job = f"j{name}"
    assert api.put(api.job(name, job), http_job()).status_code == 201
    now = datetime.now(UTC)
    add_history(
        api.server,
        job,
        [{"action_name": "MainAction", "status": "Completed", "message": "ok", "start_time": now}],
    )
    assert len(api.get(api.job(name, job) + "/history").json()["value"]) == 1
    deleted = api.delete(api.collection(name))
    assert deleted.status_code == 200 and deleted.content == b""
    assert api.get(api.collection(name)).status_code == 404
    assert api.get(api.job(name, job)).status_code == 404
    # Created again under the same name, nothing of the old one is left.
    api.put(
        api.collection(name), {"location": "West US", "properties": {"sku": {"name": "Standard"}}}
    )
    assert api.get(api.collection(name) + "/jobs").json()["value"] == []
    api.put(api.job(name, job), http_job())
    assert api.get(api.job(name, job) + "/history").json()["value"] == []


def test_disable_and_enable_act_on_the_collection_and_its_jobs(api: Api) -> None:
    name = api.new_collection()
    api.put(api.job(name, "weekly"), http_job(recurrence={"frequency": "Week", "interval": 1}))
    disabled = api.post(api.collection(name) + "/disable")
    assert disabled.status_code == 200 and disabled.content == b""
    assert api.get(api.collection(name)).json()["properties"]["state"] == "Disabled"
    job = api.get(api.job(name, "weekly")).json()["properties"]
    assert job["state"] == "disabled" and "status" not in job
    enabled = api.post(api.collection(name) + "/enable")
    assert enabled.status_code == 200 and enabled.content == b""
    assert api.get(api.collection(name)).json()["properties"]["state"] == "Enabled"
    job = api.get(api.job(name, "weekly")).json()["properties"]
    assert job["state"] == "enabled"
    assert "nextExecutionTime" in job["status"]


def test_jobs_of_a_suspended_collection_are_not_scheduled(api: Api) -> None:
    name = api.new_collection(state="Suspended")
    body = http_job(startTime="2030-01-01T00:00:00Z")
    created = api.put(api.job(name, "later"), body).json()["properties"]
    assert created["state"] == "enabled"
    assert "nextExecutionTime" not in created["status"]
    api.patch(api.collection(name), {"properties": {"state": "Enabled"}})
    status = api.get(api.job(name, "later")).json()["properties"]["status"]
    assert status["nextExecutionTime"] == "2030-01-01T00:00:00Z"


def test_missing_collection_is_404_everywhere(api: Api) -> None:
    path = api.collection("nothere")
    for method in ("GET", "PATCH", "DELETE"):
        response = api.request(method, path, {"tags": {}} if method == "PATCH" else None)
        assert response.status_code == 404, (method, response.text)
        assert error_of(response)["code"] == "ResourceNotFound"
        assert "nothere" in error_of(response)["message"]
    for action in ("enable", "disable"):
        assert api.post(f"{path}/{action}").status_code == 404
    # Jobs are never created implicitly.
    response = api.put(api.job("nothere", "j1"), http_job())
    assert response.status_code == 404 and "nothere" in error_of(response)["message"]


def test_invalid_collection_bodies_name_the_field(api: Api) -> None:
    path = api.collection("bad")
    cases = [
        ({"location": "West US"}, "properties"),
        ({"properties": {}}, "properties.sku"),
        ({"properties": {"sku": {"name": "Gold"}}}, "properties.sku.name"),
        ({"properties": {"sku": {"name": "Free"}, "state": "Deleted"}}, "properties.state"),
        ({"properties": {"sku": {"name": "Free"}, "state": "Paused"}}, "properties.state"),
        ({"properties": {"sku": {"name": "Free"}, "quota": {"maxJobCount": "x"}}}, "maxJobCount"),
        ({"properties": {"sku": {"name": "Free"}, "quota": {"maxJobCount": 0}}}, "maxJobCount"),
        (
            {
                "properties": {
                    "sku": {"name": "Free"},
                    "quota": {"maxRecurrence": {"frequency": "Second"}},
                }
            },
            "maxRecurrence.frequency",
        ),
        ({"tags": {"a": 1}, "properties": {"sku": {"name": "Free"}}}, "tags.a"),
        ({"name": "other", "properties": {"sku": {"name": "Free"}}}, "name"),
        ([1, 2], "JSON object"),
    ]
    for body, field in cases:
        response = api.put(path, body)
        assert response.status_code == 400, (body, response.text)
        assert field in error_of(response)["message"], (body, response.text)
    assert api.get(path).status_code == 404  # nothing was created


def test_invalid_names_in_the_path_are_400(api: Api) -> None:
    body = {"properties": {"sku": {"name": "Free"}}}
    for name in ("bad name", "x" * 101, "dot.", "-lead"):
        response = api.put(api.collection(name), body)
        assert response.status_code == 400, (name, response.text)
        assert "jobCollectionName" in error_of(response)["message"]
    response = api.put(api.collection("ok", group="bad*group"), body)
    assert response.status_code == 400
    assert "resourceGroupName" in error_of(response)["message"]
