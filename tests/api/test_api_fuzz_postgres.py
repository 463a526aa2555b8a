"""The schemathesis passes of tests/api/test_api_fuzz.py against a server on PostgreSQL: the same
tests, imported, in a module of their own so that the run's workers (each takes whole modules)
fuzz both databases side by side."""

import pytest

from tests.api.test_api_fuzz import (  # noqa: F401 (the fixture and the tests collected here)
    fuzz_server,
    test_no_server_error_for_any_request,
    test_no_server_error_for_unstorable_text_in_bodies,
    test_no_server_error_on_existing_resources,
)

DATABASE = "postgres"  # read by `fuzz_server`
pytestmark = pytest.mark.postgres
