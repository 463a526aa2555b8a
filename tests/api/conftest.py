"""API tests run against a real `horarium serve` process, on SQLite and on PostgreSQL
(`server` and `api`: tests/server_fixtures.py)."""

from tests.server_fixtures import api as api
from tests.server_fixtures import server as server
