"""Test-wide setup: the network rule holds (tests connect only to loopback:
tests/loopback_only.py)."""

from collections.abc import Iterator

import pytest

from tests import loopback_only

loopback_only.install()


@pytest.fixture(autouse=True)
def _only_loopback_traffic() -> Iterator[None]:
    """Fails the test that tried to connect off loopback, even when its code caught the error."""
    before = len(loopback_only.refused)
    yield
    tried = loopback_only.refused[before:]
    assert not tried, f"this test tried to connect off loopback: {tried}"
