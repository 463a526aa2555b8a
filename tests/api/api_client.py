"""Helpers of the API tests: a small client for a running server, job bodies, ARM errors, and
history rows written the way the engine writes them."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.server_process import ServerProcess, database_url

API_VERSION = "2016-03-01"


class Api:
    """A small client: paths relative to one subscription, api-version added by default."""

    def __init__(self, server: ServerProcess, subscription: str | None = None) -> None:
        self.server = server
        self.subscription = subscription or f"sub-{uuid.uuid4().hex[:8]}"
        self.http = httpx.Client(
            base_url=server.base_url,
            timeout=30,
            headers=server.auth_headers(),
            verify=server.verify,
        )

    def collection(self, name: str, group: str = "rg1") -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{group}"
            f"/providers/Microsoft.Scheduler/jobCollections/{name}"
        )

    def job(self, collection: str, name: str, group: str = "rg1") -> str:
        return f"{self.collection(collection, group)}/jobs/{name}"

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, Any] | None = None,
        content: bytes | None = None,
        version: str | None = API_VERSION,
    ) -> httpx.Response:
        query = dict(params or {})
        if version is not None:
            query.setdefault("api-version", version)
        if content is not None:
            return self.http.request(
                method, path, params=query, content=content,
                headers={"content-type": "application/json"},
            )  # fmt: skip
        return self.http.request(method, path, params=query, json=body)

    def put(self, path: str, body: Any, **kw: Any) -> httpx.Response:
        return self.request("PUT", path, body, **kw)

    def patch(self, path: str, body: Any, **kw: Any) -> httpx.Response:
        return self.request("PATCH", path, body, **kw)

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("GET", path, **kw)

    def delete(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("DELETE", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> httpx.Response:
        return self.request("POST", path, body, **kw)

    def new_collection(self, sku: str = "Standard", **properties: Any) -> str:
        """A fresh collection; returns its name."""
        name = f"jc{uuid.uuid4().hex[:8]}"
        body = {"location": "West US", "properties": {"sku": {"name": sku}, **properties}}
        response = self.put(self.collection(name), body)
        assert response.status_code == 201, response.text
        return name


def http_job(uri: str = "http://127.0.0.1:9/hook", **properties: Any) -> dict[str, Any]:
    """A job body with an HTTP action (nothing listens on port 9; the engine is off)."""
    return {
        "properties": {
            "action": {"type": "Http", "request": {"uri": uri, "method": "GET"}},
            **properties,
        }
    }


def error_of(response: httpx.Response) -> dict[str, str]:
    """The ARM error of a failed response (asserts its shape)."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) >= {"code", "message"}, body
    return body["error"]  # type: ignore[no-any-return]


def add_history(server: ServerProcess, job_key: str, entries: list[dict[str, Any]]) -> None:
    """Write history rows for a job, as the engine would (the API only reads them).
    `job_key`: the job's name; it must be unique in the database (tests use random names)."""
    import asyncio

    from sqlalchemy import insert, select

    from horarium.store.core.db import create_engine
    from horarium.store.core.schema import job_history, jobs

    async def write() -> None:
        engine = create_engine(database_url(server))
        try:
            async with engine.begin() as conn:
                job_id = (
                    await conn.execute(select(jobs.c.id).where(jobs.c.key == job_key.lower()))
                ).scalar_one()
                for entry in entries:
                    await conn.execute(insert(job_history).values(job_id=job_id, **entry))
        finally:
            await engine.dispose()

    asyncio.run(write())
