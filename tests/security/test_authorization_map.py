"""Every operation of the management API has an authorization rule: an operation without one
would be refused to everybody (403), so a new route cannot silently go unchecked."""

from __future__ import annotations

from fastapi.routing import APIRoute

from horarium.api import dashboard_routes, monitor_routes, routes
from horarium.api.authorization import ACTIONS, Access


def test_every_route_has_an_action_and_only_reads_are_open_to_readers() -> None:
    found = [*routes.router.routes, *dashboard_routes.router.routes, *monitor_routes.router.routes]
    api_routes = [r for r in found if isinstance(r, APIRoute)]
    assert {r.operation_id for r in api_routes} == set(ACTIONS)
    for route in api_routes:
        access = ACTIONS[str(route.operation_id)].access
        reads = route.methods == {"GET"} or route.path.endswith("/upcoming")
        assert access is (Access.READ if reads else Access.WRITE), route.operation_id
